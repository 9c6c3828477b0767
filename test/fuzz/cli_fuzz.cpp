// The CLI fuzzer of topocoll-model (test/README.md, "Fuzzers"): random flags
// and values, each run in a scratch folder. Every run must end within
// --limit seconds (a --sweep, which simulates every point of its range,
// within --sweep-limit) with exit code 0 and a result on stdout, or exit
// code 2 and one clear message on stderr ("topocoll-model: ..."). A crash, a
// signal, exit code 1, a hang or a silent exit is a finding.
//
// The corpus holds command lines (one a line, words separated by blanks).

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "driver.hpp"

namespace {

namespace fs = std::filesystem;

struct outcome {
  int code = -1;   // the exit code, or -1
  int signal = 0;  // the signal that ended it, or 0
  bool hung = false;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs cli with args in folder dir, killing it after limit seconds.
outcome launch(const std::string& cli, const std::vector<std::string>& args, const fs::path& dir,
               double limit) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(127);
    const int o = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = open("err.txt", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> argv{const_cast<char*>(cli.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(cli.c_str(), argv.data());
    _exit(127);
  }
  outcome r;
  int status = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.hung = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!r.hung && WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (!r.hung && WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = slurp(dir / "out.txt");
  r.err = slurp(dir / "err.txt");
  return r;
}

std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Why the run of args is a finding, or "" when it is not.
std::string judge(const std::vector<std::string>& args, const outcome& r, double limit) {
  const std::string cmd = "topocoll-model " + joined(args);
  const std::string clear = "topocoll-model: ";
  if (r.hung) return cmd + ": still running after " + std::to_string(limit) + " s";
  if (r.signal) return cmd + ": killed by signal " + std::to_string(r.signal) + "\n" + r.err;
  if (r.code == 0 && !r.out.empty()) return "";
  if (r.code == 2 && r.err.rfind(clear, 0) == 0 && r.err.size() > clear.size() + 1 &&
      r.err.find("runtime error") == std::string::npos &&
      r.err.find("AddressSanitizer") == std::string::npos)
    return "";
  return cmd + ": exit code " + std::to_string(r.code) + ", stdout " +
         std::to_string(r.out.size()) + " bytes, stderr \"" + r.err + "\"";
}

const std::vector<std::string> numbers = {"0",
                                          "1",
                                          "2",
                                          "3",
                                          "7",
                                          "8",
                                          "16",
                                          "100",
                                          "1000",
                                          "4096",
                                          "-1",
                                          "-0",
                                          "1.5",
                                          "1e3",
                                          "1e308",
                                          "nan",
                                          "inf",
                                          "-inf",
                                          "0x10",
                                          "abc",
                                          "",
                                          " 5",
                                          "2147483647",
                                          "2147483648",
                                          "268435456",
                                          "268435457",
                                          "9223372036854775807",
                                          "18446744073709551616",
                                          "1099511627776",
                                          "68719476736",
                                          "-9223372036854775808"};

template <class E>
const std::string& pick(const std::vector<std::string>& v, E& e) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(e)];
}

// A value for flag f: mostly one of its own, sometimes any word. A traced
// run (--steps, --svg) prints every message, p^2 of them for some
// collectives: its sizes stay small, so that it can end within the limit.
std::string value_for(const std::string& f, std::mt19937_64& e, bool traced) {
  static const std::vector<std::string> collectives = {
      "broadcast",      "reduce",  "all_reduce", "all_gather", "reduce_scatter", "scan",
      "exclusive_scan", "scatter", "gather",     "all_to_all", "all_to_all_v",   "bogus"};
  static const std::vector<std::string> topologies = {
      "ring", "mesh2", "mesh3", "hypercube", "tree2", "tree4", "tree8", "mesh", "tree0", "x"};
  static const std::vector<std::string> networks = {
      "matching",         "ring",     "mesh",      "mesh:2x4",      "mesh:4x2",     "mesh:0x8",
      "mesh:2x",          "mesh:3x3", "hypercube", "tree",          "complete",     "torus",
      "mesh:99999x99999", "linear",   "open_mesh", "open_mesh:2x4", "open_mesh:0x8"};
  static const std::vector<std::string> algos = {
      "automatic", "recursive_doubling", "ring", "binomial", "pipelined", "two_stage",
      "direct",    "automatic,ring",     ",",    "",         "nope"};
  static const std::vector<std::string> small_numbers = {"1",  "2",  "3",   "5",  "8",
                                                         "13", "64", "100", "257"};
  const bool any = std::bernoulli_distribution(0.15)(e);
  if (f == "--collective") return any ? pick(numbers, e) : pick(collectives, e);
  if (f == "--topology") return any ? pick(numbers, e) : pick(topologies, e);
  if (f == "--network") return any ? pick(numbers, e) : pick(networks, e);
  if (f == "--algo") return pick(algos, e);
  if (f == "--ports") return std::vector<std::string>{"multi", "single", "dual"}[e() % 3];
  if (f == "--sweep") return std::vector<std::string>{"p", "m", "q", ""}[e() % 4];
  if (f == "--csv") return "sweep.csv";
  if (f == "--svg") return "steps.svg";
  static const std::vector<std::string> words = {"abc", "", "-", "1x", "nan", "--p", "1e3"};
  if (traced && (f == "--p" || f == "--m")) return any ? pick(words, e) : pick(small_numbers, e);
  return any ? pick(numbers, e) : pick(small_numbers, e);
}

// A random command line: a few flags, sometimes a stray word or unknown flag.
std::vector<std::string> random_args(std::mt19937_64& e) {
  static const std::vector<std::string> flags = {
      "--collective", "--topology", "--network", "--p",     "--m",    "--ts",   "--tw",
      "--th",         "--ports",    "--algo",    "--sweep", "--from", "--to",   "--csv",
      "--svg",        "--steps",    "--takes",   "--help",  "-c",     "--bogus"};
  std::vector<std::string> names;
  const int n = std::uniform_int_distribution<int>(0, 7)(e);
  for (int i = 0; i < n; ++i) names.push_back(pick(flags, e));
  const bool traced = std::find(names.begin(), names.end(), "--steps") != names.end() ||
                      std::find(names.begin(), names.end(), "--svg") != names.end();
  std::vector<std::string> args;
  for (const std::string& f : names) {
    if (f == "--steps" || f == "--takes" || f == "--help") {
      args.push_back(f);
      continue;
    }
    const std::string v = value_for(f == "-c" ? "--collective" : f, e, traced);
    if (std::bernoulli_distribution(0.5)(e))
      args.push_back(f + "=" + v);
    else
      args.push_back(f), args.push_back(v);
  }
  if (std::bernoulli_distribution(0.03)(e)) args.push_back("stray");
  return args;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

}  // namespace

int main(int argc, char** argv) {
  return fuzz::guarded("cli_fuzz", [&] {
    fuzz::settings s;
    std::string cli;
    double limit = 1, sweep_limit = 10;
    fuzz::po::options_description d("cli_fuzz");
    d.add_options()("cli", fuzz::po::value(&cli)->required(), "the topocoll-model to run")(
        "limit", fuzz::po::value(&limit)->default_value(1), "seconds a run may take")(
        "sweep-limit", fuzz::po::value(&sweep_limit)->default_value(10),
        "seconds a run with --sweep may take");
    if (!fuzz::parse(argc, argv, "cli_fuzz", d, s)) return 0;
    cli = fs::absolute(cli).string();  // each run starts in a scratch folder
    const fs::path dir = fs::temp_directory_path() / ("cli_fuzz." + std::to_string(getpid()));
    fs::create_directories(dir);
    long long results = 0, rejected = 0;
    auto check = [&](const std::vector<std::string>& args) {
      const bool sweeps = std::any_of(args.begin(), args.end(), [](const std::string& a) {
        return a.rfind("--sweep", 0) == 0;
      });
      const double l = sweeps ? sweep_limit : limit;
      const outcome r = launch(cli, args, dir, l);
      (r.code == 0 ? results : rejected) += 1;
      return judge(args, r, l);
    };
    const int rc = fuzz::run(
        "cli_fuzz", s,
        " --cli " + cli + " --limit " + std::to_string(limit) + " --sweep-limit " +
            std::to_string(sweep_limit),
        [&](const std::string& line) { return check(words(line)); },
        [&](std::mt19937_64& e) { return check(random_args(e)); });
    fs::remove_all(dir);
    std::cout << "cli_fuzz: " << results << " runs gave a result, " << rejected
              << " ended with a message\n";
    return rc;
  });
}
