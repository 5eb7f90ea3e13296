#define _GNU_SOURCE
#include "csystem.h"
#include <sys/socket.h>
#include <sys/time.h>
#include <errno.h>
#include <poll.h>

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
