// See include/cwebserver.h.
#include "cwebserver.h"
#include <microhttpd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// One open connection as the shim tracks it (MHD_OPTION_NOTIFY_CONNECTION):
// whether it waits for a request header and since when, whether a request on
// it carried a live session, and whether it was admitted over a limit.
struct server;

struct tracked {
    struct tracked *prev, *next;
    struct server *server;
    int fd;
    char address[64];
    double waiting_since;   // when the wait for the current request header began (accept, or the last response)
    int in_header;          // waiting for a request header
    int authenticated;      // cweb_mark_authenticated was called
    int refused;            // CWEB_ADMITTED, CWEB_OVER_ADDRESS_LIMIT, CWEB_OVER_UNAUTHENTICATED_LIMIT
    int cut;                // shut down by the shim (deadline or eviction)
    int serving;            // a request admitted before the stop began is being read or answered
};

struct server {
    struct MHD_Daemon *daemon;
    cweb_handler handler;
    void *context;
    size_t body_limit;
    unsigned per_ip_limit, unauthenticated_limit, header_timeout;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct tracked *connections;   // a list: at most connection_limit long
    int stopping;
    int closing;                   // cweb_begin_stop was called: requests whose header comes now are not run
    pthread_cond_t drained;        // signalled when a request that was serving completes
    pthread_t watchdog;
    int watchdog_started;
};

// A connection admitted over a limit gets this long for its header, to be told 503.
#define REFUSED_HEADER_SECONDS 2.0
// A connection younger than this is never evicted for a newer one: a real
// client sends its header within a round trip, so eviction hits slow ones.
#define EVICTION_GRACE_SECONDS 1.0

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// Ends a connection from outside its thread: its read returns, libmicrohttpd
// closes it. Only on a tracked connection, with the lock held (a descriptor
// is closed only after MHD_CONNECTION_NOTIFY_CLOSED untracked it).
static void cut(struct tracked *t) {
    if (t->cut) return;
    t->cut = 1;
    shutdown(t->fd, SHUT_RDWR);
}

static void address_of(struct MHD_Connection *connection, char *buffer, size_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    buffer[0] = 0;
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buffer, (socklen_t)size);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buffer, (socklen_t)size);
}

// Admission: the per-address limit, then the limit on connections no session
// has used yet (evicting the longest-waiting header first). A connection over
// either is still accepted, so that it can be answered 503 with Retry-After
// once its header is in; it gets REFUSED_HEADER_SECONDS for that header.
static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
    struct server *server = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct tracked *t = calloc(1, sizeof *t);
        if (t == NULL) return;
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        t->fd = info ? info->connect_fd : -1;
        t->server = server;
        address_of(connection, t->address, sizeof t->address);
        double now = now_seconds();
        t->waiting_since = now;
        t->in_header = 1;
        pthread_mutex_lock(&server->lock);
        unsigned same_address = 0, unauthenticated = 0;
        struct tracked *oldest = NULL;
        for (struct tracked *o = server->connections; o; o = o->next) {
            if (o->cut) continue;
            if (o->refused == CWEB_ADMITTED && strcmp(o->address, t->address) == 0) same_address++;
            if (!o->authenticated) {
                unauthenticated++;
                if (o->in_header && now - o->waiting_since >= EVICTION_GRACE_SECONDS
                    && (oldest == NULL || o->waiting_since < oldest->waiting_since))
                    oldest = o;
            }
        }
        if (server->per_ip_limit && same_address >= server->per_ip_limit) {
            t->refused = CWEB_OVER_ADDRESS_LIMIT;
        } else if (server->unauthenticated_limit && unauthenticated >= server->unauthenticated_limit) {
            if (oldest) cut(oldest);
            else t->refused = CWEB_OVER_UNAUTHENTICATED_LIMIT;
        }
        t->next = server->connections;
        if (t->next) t->next->prev = t;
        server->connections = t;
        pthread_mutex_unlock(&server->lock);
        *socket_context = t;
    } else {
        struct tracked *t = *socket_context;
        if (t == NULL) return;
        pthread_mutex_lock(&server->lock);
        if (t->prev) t->prev->next = t->next; else server->connections = t->next;
        if (t->next) t->next->prev = t->prev;
        if (t->serving) pthread_cond_broadcast(&server->drained);
        pthread_mutex_unlock(&server->lock);
        free(t);
        *socket_context = NULL;
    }
}

// The header deadline: a connection no session has used must bring each
// request header within header_timeout seconds of being accepted or of its
// previous response; one byte every few seconds no longer keeps it open.
static void *watchdog(void *cls) {
    struct server *server = cls;
    pthread_mutex_lock(&server->lock);
    while (!server->stopping) {
        double now = now_seconds();
        for (struct tracked *t = server->connections; t; t = t->next) {
            if (!t->in_header || t->authenticated || t->cut) continue;
            double limit = t->refused ? REFUSED_HEADER_SECONDS : (double)server->header_timeout;
            if (t->refused && limit > server->header_timeout) limit = server->header_timeout;
            if (now - t->waiting_since >= limit) cut(t);
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) { until.tv_sec++; until.tv_nsec -= 1000000000; }
        pthread_cond_timedwait(&server->wake, &server->lock, &until);
    }
    pthread_mutex_unlock(&server->lock);
    return NULL;
}

static struct tracked *tracked_of(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

void cweb_mark_authenticated(void *connection) {
    struct tracked *t = tracked_of(connection);
    if (t == NULL) return;
    pthread_mutex_lock(&t->server->lock);
    t->authenticated = 1;
    pthread_mutex_unlock(&t->server->lock);
}

// The header is in (the first call of a request), or the response is done
// and the connection waits for the next header. Returns 0 when the header
// came after the stop began: that request is not run (cweb_begin_stop).
static int set_waiting(struct MHD_Connection *connection, int waiting, int *refused, int *authenticated) {
    struct tracked *t = tracked_of(connection);
    if (t == NULL) return 1;
    struct server *server = t->server;
    int admitted = 1;
    pthread_mutex_lock(&server->lock);
    t->in_header = waiting;
    if (waiting) {
        t->waiting_since = now_seconds();
        if (t->serving) pthread_cond_broadcast(&server->drained);
        t->serving = 0;
    } else if (server->closing) {
        admitted = 0;
    } else {
        t->serving = 1;
    }
    if (refused) *refused = t->refused;
    if (authenticated) *authenticated = t->authenticated;
    pthread_mutex_unlock(&server->lock);
    return admitted;
}

struct pending {
    uint8_t *body;
    size_t length, capacity;
    int too_large;
    int refused, authenticated;   // the connection's, when the header came in
    size_t header_size;           // bytes of the request head (request line and headers)
    unsigned header_count;        // header fields
};

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    (void)version;
    struct server *server = cls;
    struct pending *pending = *con_cls;
    if (pending == NULL) {
        pending = calloc(1, sizeof *pending);
        if (pending == NULL) return MHD_NO;
        *con_cls = pending;
        // After the stop began: closed unanswered, nothing of it done (a
        // client may send it again); on_completed frees `pending`.
        if (!set_waiting(connection, 0, &pending->refused, &pending->authenticated)) return MHD_NO;
        // An untracked connection (no memory for it at accept) is refused as well.
        if (tracked_of(connection) == NULL) {
            pthread_mutex_lock(&server->lock);
            int closing = server->closing;
            pthread_mutex_unlock(&server->lock);
            if (closing) return MHD_NO;
        }
        const union MHD_ConnectionInfo *size = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
        pending->header_size = size ? size->header_size : 0;
        int count = MHD_get_connection_values(connection, MHD_HEADER_KIND, NULL, NULL);
        pending->header_count = count > 0 ? (unsigned)count : 0;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (pending->too_large || pending->length + n > server->body_limit) {
            pending->too_large = 1;       // read and drop the rest, answer 413 at the end
            return MHD_YES;
        }
        if (pending->length + n > pending->capacity) {
            size_t capacity = pending->capacity ? pending->capacity : 4096;
            while (capacity < pending->length + n) capacity *= 2;
            uint8_t *grown = realloc(pending->body, capacity);
            if (grown == NULL) return MHD_NO;
            pending->body = grown;
            pending->capacity = capacity;
        }
        memcpy(pending->body + pending->length, upload_data, n);
        pending->length += n;
        return MHD_YES;
    }
    cweb_request request = {connection, method, url, pending->body, pending->length, pending->too_large,
                            pending->refused, pending->authenticated, pending->header_size, pending->header_count};
    return server->handler(server->context, &request) ? MHD_YES : MHD_NO;
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls; (void)toe;
    struct pending *pending = *con_cls;
    if (pending) { free(pending->body); free(pending); *con_cls = NULL; }
    set_waiting(connection, 1, NULL, NULL);
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Percent-decodes the path and query arguments in place, as libmicrohttpd's own
// unescaper does, but keeps "%00" as it is: a NUL would cut the C string and
// make "/index.html%00.js" look like "/index.html".
static size_t on_unescape(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls; (void)connection;
    char *in = text, *out = text;
    while (*in) {
        int hi, lo;
        if (in[0] == '%' && (hi = hex_value(in[1])) >= 0 && (lo = hex_value(in[2])) >= 0 && (hi | lo) != 0) {
            *out++ = (char)(hi * 16 + lo);
            in += 3;
        } else {
            *out++ = *in++;
        }
    }
    *out = 0;
    return (size_t)(out - text);
}

static void on_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    // A client that goes away mid-response (a closed live feed) is not news,
    // nor one that goes, or is cut off at the header deadline, mid-request.
    if (strncmp(fmt, "Failed to send", 14) == 0) return;
    if (strncmp(fmt, "Connection was closed by remote side", 36) == 0) return;
    fputs("entryd-web: libmicrohttpd: ", stderr);
    vfprintf(stderr, fmt, ap);
}

void *cweb_start(const cweb_options *o, cweb_handler handler, void *context, char *error, size_t error_size) {
    struct server *server = calloc(1, sizeof *server);
    if (server == NULL) { snprintf(error, error_size, "out of memory"); return NULL; }
    server->handler = handler;
    server->context = context;
    server->body_limit = o->body_limit;
    server->per_ip_limit = o->per_ip_limit;
    server->unauthenticated_limit = o->unauthenticated_limit;
    server->header_timeout = o->header_timeout_seconds ? o->header_timeout_seconds : o->timeout_seconds;
    pthread_mutex_init(&server->lock, NULL);
    pthread_cond_init(&server->wake, NULL);
    pthread_cond_init(&server->drained, NULL);
    // MHD_USE_ITC: MHD_quiesce_daemon needs it with an internal polling thread.
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC;
    if (o->tls_key_pem) flags |= MHD_USE_TLS;
    struct sockaddr_storage address;
    memset(&address, 0, sizeof address);
    struct MHD_OptionItem options[24];
    int n = 0;
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_log, NULL};
    if (o->listen_fd >= 0) {
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, o->listen_fd, NULL};
    } else {
        struct sockaddr_in *v4 = (struct sockaddr_in *)&address;
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&address;
        if (inet_pton(AF_INET, o->address, &v4->sin_addr) == 1) {
            v4->sin_family = AF_INET;
            v4->sin_port = htons(o->port);
        } else if (inet_pton(AF_INET6, o->address, &v6->sin6_addr) == 1) {
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons(o->port);
            flags |= MHD_USE_IPv6;
        } else {
            snprintf(error, error_size, "not a numeric IP address: %s", o->address);
            free(server);
            return NULL;
        }
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &address};
    }
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, o->connection_limit, NULL};
    // The per-address limit is the shim's (on_connection): libmicrohttpd's
    // closes the connection without a word, the shim answers 503 and Retry-After.
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, server};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_seconds, NULL};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)o->memory_limit, NULL};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, server};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)on_unescape, NULL};
    // Strict: an HTTP/1.1 request without Host, and spaces in the request
    // target or before a header's colon, are refused (400).
    //
    // Bare LF is accepted as a line end; bare CR is refused. libmicrohttpd
    // 0.9.75 (Debian 12) ends a header line at a bare LF, as RFC 9112
    // section 2.2 lets a recipient, and has no option to refuse it; this shim
    // sees the request only as parsed (names and values, no line ends), so it
    // cannot tell a bare LF from CRLF. A bare CR does not end a line there:
    // it stays inside the value, and cweb_header_has_control finds it, so
    // the request is answered 400 (RFC 9110 section 5.5). What could make a
    // proxy and this server read different requests is the framing, and that
    // is checked on what was parsed: two Content-Lengths, or one beside
    // Transfer-Encoding, are 400 and close the connection (HTTPServer.serve),
    // however the lines ended. Behind a proxy (behind-proxy, loopback only),
    // the proxy re-sends every header line with CRLF (nginx, Apache).
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL};
    if (o->tls_key_pem) {
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)o->tls_key_pem};
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)o->tls_cert_pem};
    }
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    // MHD_OPTION_END right after the array: the port argument is ignored with SOCK_ADDR/LISTEN_SOCKET.
    server->daemon = MHD_start_daemon(flags, o->port, NULL, NULL, on_request, server,
                                      MHD_OPTION_ARRAY, options, MHD_OPTION_END);
    if (server->daemon == NULL) {
        snprintf(error, error_size, "libmicrohttpd could not start (address in use, bad TLS key or certificate, or no permission)");
        free(server);
        return NULL;
    }
    if (pthread_create(&server->watchdog, NULL, watchdog, server) == 0) server->watchdog_started = 1;
    return server;
}

void cweb_begin_stop(void *s) {
    struct server *server = s;
    pthread_mutex_lock(&server->lock);
    server->closing = 1;
    pthread_mutex_unlock(&server->lock);
    // Closed, not shut down: a socket systemd passed stays open in systemd,
    // and connections waiting in its queue are for the next entryd-web.
    MHD_socket fd = MHD_quiesce_daemon(server->daemon);
    if (fd != MHD_INVALID_SOCKET) close(fd);
}

unsigned cweb_drain(void *s, double seconds) {
    struct server *server = s;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)seconds;
    until.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (until.tv_nsec >= 1000000000) { until.tv_sec++; until.tv_nsec -= 1000000000; }
    unsigned serving;
    pthread_mutex_lock(&server->lock);
    for (;;) {
        serving = 0;
        for (struct tracked *t = server->connections; t; t = t->next) serving += t->serving ? 1 : 0;
        if (serving == 0 || pthread_cond_timedwait(&server->drained, &server->lock, &until) != 0) break;
    }
    if (serving) {   // counted again: the wait may have timed out just as the last one completed
        serving = 0;
        for (struct tracked *t = server->connections; t; t = t->next) serving += t->serving ? 1 : 0;
    }
    pthread_mutex_unlock(&server->lock);
    return serving;
}

void cweb_stop(void *s) {
    struct server *server = s;
    MHD_stop_daemon(server->daemon);
    pthread_mutex_lock(&server->lock);
    server->stopping = 1;
    pthread_cond_signal(&server->wake);
    pthread_mutex_unlock(&server->lock);
    if (server->watchdog_started) pthread_join(server->watchdog, NULL);
    pthread_cond_destroy(&server->drained);
    pthread_cond_destroy(&server->wake);
    pthread_mutex_destroy(&server->lock);
    free(server);
}

const char *cweb_header(void *connection, const char *name) {
    return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

struct count_context { const char *name; unsigned count; };

static enum MHD_Result on_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind; (void)value;
    struct count_context *c = cls;
    if (strcasecmp(key, c->name) == 0) c->count++;
    return MHD_YES;
}

static enum MHD_Result on_header_control(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    int *found = cls;
    for (const char *texts[2] = {key, value}, **t = texts; t < texts + 2; t++)
        for (const unsigned char *c = (const unsigned char *)*t; c && *c; c++)
            if ((*c < 0x20 && *c != '\t') || *c == 0x7f) { *found = 1; return MHD_NO; }
    return MHD_YES;
}

int cweb_header_has_control(void *connection) {
    int found = 0;
    MHD_get_connection_values(connection, MHD_HEADER_KIND, on_header_control, &found);
    return found;
}

unsigned cweb_header_count(void *connection, const char *name) {
    struct count_context c = {name, 0};
    MHD_get_connection_values(connection, MHD_HEADER_KIND, on_header, &c);
    return c.count;
}

const char *cweb_query(void *connection, const char *name) {
    return MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, name);
}

struct each_context { void (*each)(void *, const char *, const char *); void *context; };

static enum MHD_Result on_argument(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    struct each_context *e = cls;
    e->each(e->context, key, value ? value : "");
    return MHD_YES;
}

void cweb_query_each(void *connection, void (*each)(void *, const char *, const char *), void *context) {
    struct each_context e = {each, context};
    MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, on_argument, &e);
}

void cweb_client_address(void *connection, char *buffer, size_t size) {
    address_of(connection, buffer, size);
}

static int add_headers(struct MHD_Response *response, const char *headers) {
    if (headers == NULL) return 1;
    const char *line = headers;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        const char *colon = memchr(line, ':', length);
        if (colon) {
            char name[128], value[1024];
            size_t nl = (size_t)(colon - line), vl = length - nl - 1;
            const char *v = colon + 1;
            while (vl && *v == ' ') { v++; vl--; }
            if (nl >= sizeof name || vl >= sizeof value) return 0;
            memcpy(name, line, nl); name[nl] = 0;
            memcpy(value, v, vl); value[vl] = 0;
            if (MHD_add_response_header(response, name, value) != MHD_YES) return 0;
        }
        if (!end) break;
        line = end + 1;
    }
    return 1;
}

// Once the stop began, a response closes its connection after it: the client
// sends its next request elsewhere (or later) instead of to a server that
// would not run it.
static int add_closing(void *connection, struct MHD_Response *response) {
    struct tracked *t = tracked_of(connection);
    if (t == NULL) return 1;
    pthread_mutex_lock(&t->server->lock);
    int closing = t->server->closing;
    pthread_mutex_unlock(&t->server->lock);
    if (!closing || MHD_get_response_header(response, "Connection") != NULL) return 1;  // refusals close already
    return MHD_add_response_header(response, "Connection", "close") == MHD_YES;
}

int cweb_respond(void *connection, unsigned status, const char *headers, const uint8_t *body, size_t length) {
    struct MHD_Response *response = MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return 0;
    if (!add_headers(response, headers) || !add_closing(connection, response)) { MHD_destroy_response(response); return 0; }
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result == MHD_YES;
}

int cweb_respond_stream(void *connection, unsigned status, const char *headers,
                        cweb_reader reader, cweb_release release, void *stream) {
    struct MHD_Response *response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096,
        (MHD_ContentReaderCallback)reader, stream, (MHD_ContentReaderFreeCallback)release);
    if (response == NULL) { release(stream); return 0; }
    if (!add_headers(response, headers) || !add_closing(connection, response)) { MHD_destroy_response(response); return 0; }
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result == MHD_YES;
}
