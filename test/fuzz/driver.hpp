#pragma once
// The loop every fuzzer shares (test/README.md, "Fuzzers"): the options
// (Boost.Program_options), the corpus replayed first, then random cases from
// the seed until --iterations or --seconds run out. A case is a function of
// (seed, index): a failure prints both and the command line that repeats it.

#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace fuzz {

namespace po = boost::program_options;

struct settings {
  std::uint64_t seed = 39;
  long long iterations = 1000;
  double seconds = 0;   // 0: no time limit
  long long only = -1;  // >= 0: run this case alone (a reproduction)
  std::string corpus;   // the file of earlier findings, one per line
  po::variables_map vm;
};

// The engine of case `index` of a run from `seed`: each case reproducible alone.
inline std::mt19937_64 engine(std::uint64_t seed, long long index) {
  std::seed_seq s{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                  static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32)};
  return std::mt19937_64(s);
}

// Parses the shared options plus `extra`; false after --help.
inline bool parse(int argc, char** argv, const char* name, po::options_description extra,
                  settings& s) {
  po::options_description d(std::string(name) + " (test/README.md, \"Fuzzers\")");
  d.add_options()("help,h", "this text")("seed", po::value(&s.seed)->default_value(s.seed),
                                         "the run's seed (CI passes the commit's)")(
      "iterations", po::value(&s.iterations)->default_value(s.iterations),
      "random cases to run after the corpus")(
      "seconds", po::value(&s.seconds)->default_value(0),
      "stop after this many seconds (0: no limit); for long runs by hand")(
      "case", po::value(&s.only), "run only case N of the seed (a failure prints it)")(
      "corpus", po::value(&s.corpus), "replay this file of earlier findings first");
  d.add(extra);
  po::store(po::parse_command_line(argc, argv, d), s.vm);
  po::notify(s.vm);
  if (s.vm.count("help")) {
    std::cout << d << "\n";
    return false;
  }
  return true;
}

// The corpus's entries: its lines, less blanks and # comments.
inline std::vector<std::string> corpus_lines(const std::string& path) {
  std::vector<std::string> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the corpus " + path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

// Replays the corpus with `replay` (an empty string: passed), then runs the
// random cases with `one` (the same). Returns the exit code: 0 when every
// case passed, 1 at the first failure, after printing the reproduction.
inline int run(const char* name, const settings& s, const std::string& repro_args,
               const std::function<std::string(const std::string&)>& replay,
               const std::function<std::string(std::mt19937_64&)>& one) {
  std::cout << name << ": seed " << s.seed << "\n" << std::flush;
  const std::string repro = std::string(name) + repro_args + " --seed " + std::to_string(s.seed);
  std::size_t replayed = 0;
  if (s.only < 0)
    for (const std::string& entry : corpus_lines(s.corpus)) {
      if (const std::string why = replay(entry); !why.empty()) {
        std::cout << name << ": FAILED on corpus entry \"" << entry << "\": " << why << "\n";
        return 1;
      }
      ++replayed;
    }
  const auto t0 = std::chrono::steady_clock::now();
  const long long first = s.only >= 0 ? s.only : 0, last = s.only >= 0 ? s.only + 1 : s.iterations;
  long long n = first;
  for (; n < last; ++n) {
    if (s.seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= s.seconds)
      break;
    std::mt19937_64 e = engine(s.seed, n);
    if (const std::string why = one(e); !why.empty()) {
      std::cout << name << ": FAILED on case " << n << " of seed " << s.seed << ": " << why
                << "\nreproduce: " << repro << " --case " << n << "\n";
      return 1;
    }
  }
  std::cout << name << ": " << replayed << " corpus entries and " << (n - first)
            << " random cases passed (seed " << s.seed << ")\n";
  return 0;
}

// Wraps main's body: options errors exit 2 with the message.
inline int guarded(const char* name, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace fuzz
