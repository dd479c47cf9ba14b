#include "server/probes/command/command_descendants.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace gpuprobe {
namespace {

struct Process {
  int pid = 0;
  int ppid = 0;
  int pgrp = 0;
  bool zombie = false;
  std::string run;  // its GPUPROBE_COMMAND_RUN, if any
};

// Every process /proc shows (those this user may read), with its parent and its run's token.
std::vector<Process> Processes() {
  std::vector<Process> all;
  const std::string prefix = absl::StrCat(kCommandRunVariable, "=");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    Process p;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &p.pid)) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    if (!std::getline(stat, text)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, so read after its last ')'.
    const size_t paren = text.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(text.substr(paren + 1));
    char state = 0;
    if (!(rest >> state >> p.ppid >> p.pgrp)) continue;
    p.zombie = state == 'Z' || state == 'X';
    std::ifstream environ(entry.path() / "environ");
    for (std::string variable; std::getline(environ, variable, '\0');) {
      if (variable.starts_with(prefix)) p.run = variable.substr(prefix.size());
    }
    all.push_back(std::move(p));
  }
  return all;
}

// The pids of the commands runs started and have not ended: another run's sweep leaves them
// (and their exit status) to their own runner.
std::mutex commands_mu;
std::set<int>& Commands() {
  static std::set<int> commands;
  return commands;
}

bool IsCommand(int pid) {
  std::lock_guard<std::mutex> lock(commands_mu);
  return Commands().contains(pid);
}

// SIGKILL to each of `pids` until none is left, at most until `deadline`; reaps those that are
// this process's children (zombies once killed). `find` lists what is still there. Returns those
// killed.
std::set<int> KillUntilGone(const std::function<std::set<int>(const std::vector<Process>&)>& find,
                            absl::Time deadline) {
  std::set<int> killed;
  for (;;) {
    const std::vector<Process> all = Processes();
    const std::set<int> found = find(all);
    int live = 0;
    for (const Process& p : all) {
      if (!found.contains(p.pid)) continue;
      if (p.zombie) {
        if (p.ppid == getpid()) waitpid(p.pid, nullptr, WNOHANG);
        continue;
      }
      ++live;
      killed.insert(p.pid);
      kill(p.pid, SIGKILL);
    }
    if (live == 0 || absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return killed;
}

}  // namespace

CommandRun CommandRun::Begin() {
  (void)KillOrphanedRuns();
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  static std::atomic<uint64_t> count{0};
  std::random_device random;
  std::set<int> children;
  for (const Process& p : Processes()) {
    if (p.ppid == getpid()) children.insert(p.pid);
  }
  return CommandRun(absl::StrFormat("%d-%d-%08x", getpid(), count++, random()),
                    std::move(children));
}

void CommandRun::Started(int pid) {
  pid_ = pid;
  std::lock_guard<std::mutex> lock(commands_mu);
  Commands().insert(pid);
}

CommandRun::~CommandRun() {
  if (pid_ == 0) return;
  std::lock_guard<std::mutex> lock(commands_mu);
  Commands().erase(pid_);
}

std::set<int> CommandRun::KillLeftBehind(int pid, absl::Duration wait) {
  const auto find = [&](const std::vector<Process>& all) {
    std::map<int, int> parent;
    for (const Process& p : all) parent[p.pid] = p.ppid;
    const auto below_command = [&](int of) {
      for (int hops = 0; hops < 4096 && of > 1; ++hops) {
        const auto up = parent.find(of);
        if (up == parent.end()) return false;
        if (up->second == pid) return true;
        of = up->second;
      }
      return false;
    };
    std::set<int> found;
    for (const Process& p : all) {
      if (p.pid == pid || p.pid == getpid()) continue;
      // An orphan back here, not of another run: its own token, or none (env -i).
      const bool came_back = p.ppid == getpid() && !children_before_.contains(p.pid) &&
                             !IsCommand(p.pid) && (p.run.empty() || p.run == token_);
      if (p.run == token_ || below_command(p.pid) || came_back) found.insert(p.pid);
    }
    return found;
  };
  return KillUntilGone(find, absl::Now() + wait);
}

int LiveProcessesOfGroup(int group) {
  int live = 0;
  for (const Process& p : Processes()) live += p.pgrp == group && !p.zombie;
  return live;
}

int KillOrphanedRuns() {
  const auto find = [](const std::vector<Process>& all) {
    std::set<int> found;
    for (const Process& p : all) {
      int owner = 0;
      if (p.run.empty() || !absl::SimpleAtoi(p.run.substr(0, p.run.find('-')), &owner)) continue;
      if (owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH) found.insert(p.pid);
    }
    return found;
  };
  return static_cast<int>(KillUntilGone(find, absl::Now() + absl::Seconds(5)).size());
}

}  // namespace gpuprobe
