// The Georgia Tech lecture's all_to_all by hypercubic permutation, on the
// library's own kernel: in step k every rank sends the right half of its
// array to the rank whose bit log2(p) - k differs (highest bit first),
// receives that rank's left half, and interleaves the two. Rank 0's array
// after each step is the slide's.
//
// The library's store-and-forward all_to_all on Hypercube<D> (Grama Figure
// 4.20) folds the dimensions lowest first. On a communicator whose ranks are
// the bit reversals of the original ones (split with key = reversed rank) it
// crosses the original ranks' highest bit first: the lecture's order, with the
// same blocks in every message and the same cost, (t_s + t_w m p / 2) log p.
//
//   hypercubic_permutation [file.svg]   prints rank 0's arrays, checks them
//                                       against the slide, draws them

#include <topocoll/topocoll.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <vector>

namespace tc = topocoll;

namespace {

constexpr int d = 3, p = 1 << d;

struct block {  // m_ij: from rank i, for rank j
  int src, dst;
  bool operator==(const block&) const = default;
};

int reversed(int r) {
  int v = 0;
  for (int b = 0; b < d; ++b) v |= ((r >> b) & 1) << (d - 1 - b);
  return v;
}

struct step {
  int partner;  // an original rank
  std::vector<block> sent, received;
};

// The transport the kernel runs on: the bit-reversed communicator, and rank
// 0's exchanges written down.
template <class C>
struct watched {
  C* c;
  std::vector<step>* steps;
  int rank() const { return c->rank(); }
  int size() const { return c->size(); }
  template <class T>
  void send(int dest, int tag, std::span<T> data) {
    c->send(dest, tag, data);
  }
  template <class T>
  void recv(int source, int tag, std::span<T> data) {
    c->recv(source, tag, data);
  }
  template <class T, class U>
  void sendrecv(int dest, std::span<T> out, int source, std::span<U> in, int tag) {
    c->sendrecv(dest, out, source, in, tag);
    if (c->rank() == 0)
      steps->push_back({reversed(dest), {out.begin(), out.end()}, {in.begin(), in.end()}});
  }
};

// The slide's arrays: rank 0's blocks in (destination, source) order.
std::vector<std::vector<block>> arrays_of(const std::vector<step>& steps) {
  std::vector<block> held;
  for (int j = 0; j < p; ++j) held.push_back({0, j});
  std::vector<std::vector<block>> arrays{held};
  for (const step& s : steps) {
    std::erase_if(held, [&](const block& b) { return std::ranges::count(s.sent, b) > 0; });
    held.insert(held.end(), s.received.begin(), s.received.end());
    std::ranges::sort(
        held, [](block a, block b) { return a.dst != b.dst ? a.dst < b.dst : a.src < b.src; });
    arrays.push_back(held);
  }
  return arrays;
}

std::string name(block b) {
  return "m" + std::to_string(b.src) + std::to_string(b.dst);
}
std::string names(const std::vector<block>& v) {
  std::string s;
  for (block b : v) s += (s.empty() ? "" : " ") + name(b);
  return s;
}

// Rows of boxes: received in the step before (red), sent in the step after (blue).
void draw(const std::string& file, const std::vector<std::vector<block>>& arrays,
          const std::vector<step>& steps) {
  const int box = 44, left = 200, top = 40, row = 40;
  std::ofstream o(file);
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + p * box + 20 << "\" height=\""
    << top + static_cast<int>(arrays.size()) * row + 30
    << "\" font-family=\"sans-serif\" font-size=\"13\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"10\" y=\"22\" font-weight=\"bold\">all_to_all by hypercubic permutation, "
       "rank 0 of 8 (red: received, blue: sent next)</text>\n";
  for (std::size_t k = 0; k < arrays.size(); ++k) {
    const int y = top + static_cast<int>(k) * row;
    const std::string label = k == 0 ? "start"
                                     : "step " + std::to_string(k) + ": with rank " +
                                           std::to_string(steps[k - 1].partner);
    o << "<text x=\"" << left - 10 << "\" y=\"" << y + 22 << "\" text-anchor=\"end\">" << label
      << "</text>\n";
    for (int i = 0; i < p; ++i) {
      const block b = arrays[k][static_cast<std::size_t>(i)];
      const bool got = k > 0 && std::ranges::count(steps[k - 1].received, b) > 0;
      const bool goes = k < steps.size() && std::ranges::count(steps[k].sent, b) > 0;
      o << "<rect x=\"" << left + i * box << "\" y=\"" << y << "\" width=\"" << box - 4
        << "\" height=\"30\" fill=\"" << (got ? "#f4c7c3" : "#f5f5f5") << "\" stroke=\""
        << (goes ? "#1a5fb4" : "#999") << "\" stroke-width=\"" << (goes ? 3 : 1) << "\"/>\n"
        << "<text x=\"" << left + i * box + (box - 4) / 2 << "\" y=\"" << y + 20
        << "\" text-anchor=\"middle\">" << name(b) << "</text>\n";
    }
  }
  o << "</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<step> steps;
  std::atomic<bool> delivered = true;  // every rank's result, checked on its thread
  tc::loopback::run(p, [&](tc::loopback::Comm& c) {
    tc::loopback::Comm bits_reversed = c.split(0, reversed(c.rank()));
    std::vector<block> in(p), out(p);
    for (int j = 0; j < p; ++j) in[static_cast<std::size_t>(j)] = {c.rank(), reversed(j)};
    watched<tc::loopback::Comm> w{&bits_reversed, &steps};
    tc::all_to_all<tc::Hypercube<d>>(w, std::span<const block>(in), std::span<block>(out),
                                     tc::options{.algo = tc::algorithm::store_and_forward});
    for (int i = 0; i < p; ++i)
      if (!(out[static_cast<std::size_t>(i)] == block{reversed(i), c.rank()})) delivered = false;
  });
  const std::vector<std::vector<block>> arrays = arrays_of(steps);
  const char* const slide[] = {"m00 m01 m02 m03 m04 m05 m06 m07", "m00 m40 m01 m41 m02 m42 m03 m43",
                               "m00 m20 m40 m60 m01 m21 m41 m61",
                               "m00 m10 m20 m30 m40 m50 m60 m70"};
  bool same = arrays.size() == 4;
  for (std::size_t k = 0; k < arrays.size(); ++k) {
    if (k > 0)
      std::printf("step %zu: send %s to rank %d, receive %s\n", k, names(steps[k - 1].sent).c_str(),
                  steps[k - 1].partner, names(steps[k - 1].received).c_str());
    std::printf("rank 0: %s\n", names(arrays[k]).c_str());
    same = same && k < 4 && names(arrays[k]) == slide[k];
  }
  if (argc > 1) draw(argv[1], arrays, steps);
  std::printf("%s\n", !delivered ? "WRONG: a rank's result is not the all_to_all"
                      : same     ? "the slide's arrays"
                                 : "WRONG: not the slide's arrays");
  return delivered && same ? 0 : 1;
}
