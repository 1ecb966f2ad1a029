// The per-call reaper behind run_shell: a process between the caller and the command that is a
// child subreaper (prctl PR_SET_CHILD_SUBREAPER), so every process the command leaves behind --
// a background job, a `setsid` child, a double-forked daemon -- is reparented to it rather than to
// init, and killed when the command ends, is cancelled or times out. Only async-signal-safe calls:
// it runs in a child forked from a process that may have other threads.
#pragma once

namespace mf::process::reaper {

// Called in a freshly forked child: forks once more. Returns true in the grandchild, which goes on
// to exec the command; false when the fork fails. The child becomes the grandchild's reaper and
// never returns: when the command exits it writes the command's wait status (an int) to
// `status_fd`, and it kills every process below it on the caller's SIGTERM (the caller's timeout,
// cancellation or end of the call) or when the caller dies (PR_SET_PDEATHSIG), then exits; a
// signal from any other process is ignored. It exits at once
// after the status when nothing is left below it.
bool fork_under_reaper(int status_fd);

}  // namespace mf::process::reaper
