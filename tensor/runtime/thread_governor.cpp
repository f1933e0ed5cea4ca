#include "tinygpt/tensor/runtime/thread_governor.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tinygpt/tensor/runtime/threads.h"

namespace tg {

namespace load {

std::optional<CpuTicks> parse_proc_stat(const std::string& text, const std::vector<int>& cpus) {
  CpuTicks sum;
  for (int cpu : cpus) {
    const std::string label = "\ncpu" + std::to_string(cpu) + " ";
    const size_t at = ("\n" + text).find(label);
    if (at == std::string::npos) return std::nullopt;
    std::istringstream fields(text.substr(at + label.size() - 1));
    uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (!(fields >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal)) return std::nullopt;
    sum.busy += user + nice + system + irq + softirq;
    sum.total += user + nice + system + idle + iowait + irq + softirq + steal;
  }
  return sum;
}

std::optional<uint64_t> parse_process_ticks(const std::string& text) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so count from the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int index = 3; index <= 13; ++index)  // fields 3 (state) to 13
    if (!(fields >> field)) return std::nullopt;
  if (!(fields >> utime >> stime)) return std::nullopt;  // fields 14 and 15
  return utime + stime;
}

int threads_for_load(double others, int cpus, int ceiling) {
  const int left = static_cast<int>(std::floor(static_cast<double>(cpus) - std::max(0.0, others) + 0.3));
  return std::clamp(left, 1, std::max(1, ceiling));
}

}  // namespace load

namespace {

constexpr std::chrono::milliseconds kInterval{250};

std::string read_file(const char* path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The CPUs this process may run on.
std::vector<int> usable_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

struct Reading {
  load::CpuTicks machine;
  uint64_t own = 0;
};

class Governor {
 public:
  Governor() : cpus_(usable_cpus()) {
    thread_ceiling();  // fixes the ceiling before the count ever changes
    if (threads_fixed_by_user())
      why_not_ = "TINYGPT_THREADS=fixed";
    else if (const std::optional<Reading> first = cpus_.empty() ? std::nullopt : read())
      remember(*first);  // the baseline
    else
      why_not_ = "/proc/stat unreadable";
  }

  const std::string& why_not() const { return why_not_; }

  void adapt() {
    if (!why_not_.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_time_ < kInterval) return;
    const std::optional<Reading> reading = read();
    if (!reading) {
      why_not_ = "/proc/stat unreadable";
      return;
    }
    // Counters only grow, unless a CPU went offline: then this reading is the new baseline.
    const bool grew = reading->machine.total >= last_.machine.total && reading->machine.busy >= last_.machine.busy &&
                      reading->own >= last_.own;
    const uint64_t total = grew ? reading->machine.total - last_.machine.total : 0;
    if (total > 0) {
      // The other processes' ticks, as CPUs busy on average (this process's ticks count the same clock).
      const double busy = static_cast<double>(reading->machine.busy - last_.machine.busy);
      const double own = static_cast<double>(reading->own - last_.own);
      const double others = std::max(0.0, busy - own) / static_cast<double>(total) * static_cast<double>(cpus_.size());
      const int wanted = load::threads_for_load(others, static_cast<int>(cpus_.size()), thread_ceiling());
      if (wanted != num_threads()) use_threads(wanted);
    }
    remember(*reading);
  }

 private:
  std::optional<Reading> read() const {
    const std::optional<load::CpuTicks> machine = load::parse_proc_stat(read_file("/proc/stat"), cpus_);
    const std::optional<uint64_t> own = load::parse_process_ticks(read_file("/proc/self/stat"));
    if (!machine || !own) return std::nullopt;
    return Reading{*machine, *own};
  }

  void remember(const Reading& reading) {
    last_ = reading;
    last_time_ = std::chrono::steady_clock::now();
  }

  std::vector<int> cpus_;
  std::string why_not_;
  Reading last_;
  std::chrono::steady_clock::time_point last_time_{};
};

std::atomic<Governor*> started{nullptr};

}  // namespace

bool threads_fixed_by_user() {
  const char* setting = std::getenv("TINYGPT_THREADS");
  return setting && std::string(setting) == "fixed";
}

void start_adapting_threads_to_load() {
  static Governor governor;
  started = &governor;
}

void adapt_threads_to_load() {
  if (Governor* governor = started.load(std::memory_order_relaxed)) governor->adapt();
}

std::string why_threads_do_not_adapt() {
  const Governor* governor = started.load();
  return governor ? governor->why_not() : "not started";
}


}  // namespace tg
