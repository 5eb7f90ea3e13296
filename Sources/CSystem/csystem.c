#define _GNU_SOURCE
#include "csystem.h"
#include <sys/socket.h>
#include <sys/time.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

int csystem_socket_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *pid = cred.pid; *uid = cred.uid; *gid = cred.gid;
    return 0;
}

int csystem_accept_cloexec(int fd) { return accept4(fd, 0, 0, SOCK_CLOEXEC); }

int csystem_unix_stream_socket(void) { return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); }

int csystem_set_timeouts(int fd, long recv_ms, long send_ms) {
    struct timeval r = { recv_ms / 1000, (recv_ms % 1000) * 1000 };
    struct timeval s = { send_ms / 1000, (send_ms % 1000) * 1000 };
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &r, sizeof r) != 0) return -1;
    if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &s, sizeof s) != 0) return -1;
    return 0;
}

int csystem_other_end_hung_up(int fd) {
    struct pollfd p = { fd, POLLRDHUP, 0 };
    if (poll(&p, 1, 0) <= 0) return 0;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

pid_t csystem_spawn_shell(const char *command, int fd) {
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    sigset_t none, all;
    pid_t pid = -1;
    int rc = posix_spawnattr_init(&attr);
    if (rc != 0) { errno = rc; return -1; }
    rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) { posix_spawnattr_destroy(&attr); errno = rc; return -1; }
    sigemptyset(&none);
    sigfillset(&all);
    if ((rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0
        && (rc = posix_spawnattr_setpgroup(&attr, 0)) == 0
        && (rc = posix_spawnattr_setsigmask(&attr, &none)) == 0
        && (rc = posix_spawnattr_setsigdefault(&attr, &all)) == 0
        && (rc = posix_spawn_file_actions_adddup2(&actions, fd, 0)) == 0
        && (rc = posix_spawn_file_actions_adddup2(&actions, fd, 1)) == 0) {
        char *argv[] = {"sh", "-c", (char *)command, 0};
        rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, environ);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) { errno = rc; return -1; }
    return pid;
}

int csystem_child_exited(pid_t pid) {
    siginfo_t info;
    info.si_pid = 0;
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return -1;
    return info.si_pid == pid ? 1 : 0;
}
