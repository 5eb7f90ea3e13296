// A small C interface over libmicrohttpd (Debian libmicrohttpd-dev, 0.9.75) for
// entryd-web. MHD_start_daemon and MHD_get_connection_info are variadic, which
// Swift cannot call; this shim calls them with fixed arguments, collects each
// request's body up to a bound, and hands the whole request to one callback.
#ifndef CWEBSERVER_H
#define CWEBSERVER_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// One complete request, valid during the handler call only.
typedef struct cweb_request {
    void *connection;          // struct MHD_Connection *
    const char *method;        // "GET", "POST", ...
    const char *url;           // the path, percent-decoded by libmicrohttpd, no query
    const uint8_t *body;       // the request body (NULL when empty)
    size_t body_length;        // in bytes
    int body_too_large;        // 1 when the body passed the bound: answer 413
    int refused;               // CWEB_ADMITTED, or the limit the connection was accepted over: answer 503
    int authenticated;         // a request on this connection carried a live session (cweb_mark_authenticated)
    size_t header_size;        // bytes of the request head as received (request line and headers)
    unsigned header_count;     // header fields
} cweb_request;

/// How a connection was admitted (cweb_request.refused).
enum {
    CWEB_ADMITTED = 0,
    /// Its address had per_ip_limit connections open already.
    CWEB_OVER_ADDRESS_LIMIT = 1,
    /// unauthenticated_limit connections no session had used were open, none evictable.
    CWEB_OVER_UNAUTHENTICATED_LIMIT = 2,
};

/// Called once per request, on the connection's own thread (one thread per
/// connection). It must answer through cweb_respond or cweb_respond_stream and
/// return what they returned.
typedef int (*cweb_handler)(void *context, cweb_request *request);

/// Fills `buffer` (at most `max` bytes) with the next part of a streamed body;
/// returns the bytes written, 0 to be called again, -1 at the end, -2 on error.
/// May block (one thread per connection).
typedef ssize_t (*cweb_reader)(void *stream, uint64_t position, char *buffer, size_t max);
/// Frees a stream's state when the response is done or the client is gone.
typedef void (*cweb_release)(void *stream);

typedef struct cweb_options {
    const char *address;       // numeric IPv4 or IPv6 address to bind, or NULL with listen_fd
    uint16_t port;
    int listen_fd;             // an already listening socket (systemd's), or -1
    const char *tls_key_pem;   // PEM text of key and certificate, or NULL for plain HTTP
    const char *tls_cert_pem;
    unsigned connection_limit; // connections at once (all clients)
    unsigned per_ip_limit;     // connections at once from one address (0: no limit); more are answered 503
    unsigned unauthenticated_limit; // connections at once that no session has used (0: no limit)
    unsigned timeout_seconds;  // idle time before a connection is closed (slow clients)
    unsigned header_timeout_seconds; // each request header whole within this, until a session is used (0: timeout_seconds)
    size_t memory_limit;       // bytes per connection for headers and buffers (bounds header size)
    size_t body_limit;         // largest request body kept, in bytes
} cweb_options;

/// Starts serving (and the thread that enforces the header deadline); NULL on failure with `error` (at least 256 bytes) saying why.
void *cweb_start(const cweb_options *options, cweb_handler handler, void *context, char *error, size_t error_size);
/// The first step of a graceful stop: stops accepting connections (closes
/// this process's listening socket) and runs no request whose header comes
/// from now on (its connection is closed unanswered); a response from now on
/// closes its connection after it.
void cweb_begin_stop(void *server);
/// After cweb_begin_stop: waits until every request whose header came before
/// it has been answered, its response sent (or its connection ended), at most
/// `seconds`; returns how many are still going.
unsigned cweb_drain(void *server, double seconds);
/// Stops serving: closes the listening socket (unless cweb_begin_stop did),
/// ends every connection, waits for their threads.
void cweb_stop(void *server);

/// The value of a request header (case-insensitive name), or NULL.
const char *cweb_header(void *connection, const char *name);
/// How many times the request carries header `name` (case-insensitive).
unsigned cweb_header_count(void *connection, const char *name);
/// 1 when a header's name or value holds a control character other than tab
/// (a bare CR, which libmicrohttpd keeps inside the value; DEL): answer 400.
int cweb_header_has_control(void *connection);
/// The value of a query-string argument, percent-decoded, or NULL.
const char *cweb_query(void *connection, const char *name);
/// Calls `each` for every query-string argument in order.
void cweb_query_each(void *connection, void (*each)(void *context, const char *key, const char *value), void *context);
/// Records that a request on this connection carried a live session: from
/// then on it no longer counts against unauthenticated_limit, is never
/// evicted, and has no header deadline (the idle timeout still holds).
void cweb_mark_authenticated(void *connection);
/// The client's address as text ("127.0.0.1", "::1"), into `buffer`.
void cweb_client_address(void *connection, char *buffer, size_t size);

/// Answers with a whole body. `headers` is "Name: value\n" lines (or NULL).
int cweb_respond(void *connection, unsigned status, const char *headers, const uint8_t *body, size_t length);
/// Answers with a body produced by `reader` as the client reads it (Server-Sent Events).
int cweb_respond_stream(void *connection, unsigned status, const char *headers,
                        cweb_reader reader, cweb_release release, void *stream);
#endif
