#pragma once
// Renamed to pipeline.hpp (the pipelines run along any linear dimension, not
// only a ring). Kept for the includes not yet updated; remove it once none is.

#include "pipeline.hpp"
