// Tiny C shims for Linux calls whose declarations need _GNU_SOURCE or that
// Swift cannot import cleanly (struct ucred, accept4, SOCK_* flags).
#ifndef CSYSTEM_H
#define CSYSTEM_H
#include <sys/types.h>

/// Credentials of the process at the other end of a connected Unix socket
/// (SO_PEERCRED, unix(7)).
/// Returns 0 on success, -1 with errno set on failure.
int csystem_socket_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// accept4(2) with SOCK_CLOEXEC. Returns the new fd or -1 with errno set.
int csystem_accept_cloexec(int fd);

/// socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0).
int csystem_unix_stream_socket(void);

/// Sets SO_RCVTIMEO and SO_SNDTIMEO on fd, in milliseconds (0 = none).
int csystem_set_timeouts(int fd, long recv_ms, long send_ms);
/// 1 when the other end of a connected socket has hung up (poll(2) POLLRDHUP,
/// POLLHUP or POLLERR), 0 otherwise; never blocks or consumes data.
int csystem_other_end_hung_up(int fd);

/// Starts `/bin/sh -c command` with its stdin and stdout on `fd` (stderr
/// inherited), in a process group of its own (so the whole command, its
/// children too, can be signalled with kill(-pid, …)), with every signal at
/// its default action and none blocked (the daemon blocks some for its
/// signal thread). posix_spawn(3). Returns the pid, or -1 with errno set.
pid_t csystem_spawn_shell(const char *command, int fd);

/// 1 when child `pid` has exited (left unreaped: its process group id stays
/// taken until waitpid), 0 while it runs, -1 with errno set (ECHILD: no such
/// child). waitid(2) with WNOHANG | WNOWAIT.
int csystem_child_exited(pid_t pid);
#endif
