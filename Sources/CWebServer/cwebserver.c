// See include/cwebserver.h.
#include "cwebserver.h"
#include <microhttpd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct server {
    struct MHD_Daemon *daemon;
    cweb_handler handler;
    void *context;
    size_t body_limit;
};

struct pending {
    uint8_t *body;
    size_t length, capacity;
    int too_large;
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
    cweb_request request = {connection, method, url, pending->body, pending->length, pending->too_large};
    return server->handler(server->context, &request) ? MHD_YES : MHD_NO;
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls; (void)connection; (void)toe;
    struct pending *pending = *con_cls;
    if (pending) { free(pending->body); free(pending); *con_cls = NULL; }
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
    // A client that goes away mid-response (a closed live feed) is not news.
    if (strncmp(fmt, "Failed to send", 14) == 0) return;
    fputs("entryd-web: libmicrohttpd: ", stderr);
    vfprintf(stderr, fmt, ap);
}

void *cweb_start(const cweb_options *o, cweb_handler handler, void *context, char *error, size_t error_size) {
    struct server *server = calloc(1, sizeof *server);
    if (server == NULL) { snprintf(error, error_size, "out of memory"); return NULL; }
    server->handler = handler;
    server->context = context;
    server->body_limit = o->body_limit;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
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
    if (o->per_ip_limit)
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->per_ip_limit, NULL};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_seconds, NULL};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)o->memory_limit, NULL};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, NULL};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)on_unescape, NULL};
    // Refuse what RFC 9112 lets a server refuse (bare LF, spaces before colons, ...).
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
    return server;
}

void cweb_quiesce(void *s) {
    struct server *server = s;
    MHD_socket fd = MHD_quiesce_daemon(server->daemon);
    (void)fd;
}

void cweb_stop(void *s) {
    struct server *server = s;
    MHD_stop_daemon(server->daemon);
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
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    buffer[0] = 0;
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buffer, size);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buffer, size);
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

int cweb_respond(void *connection, unsigned status, const char *headers, const uint8_t *body, size_t length) {
    struct MHD_Response *response = MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return 0;
    if (!add_headers(response, headers)) { MHD_destroy_response(response); return 0; }
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result == MHD_YES;
}

int cweb_respond_stream(void *connection, unsigned status, const char *headers,
                        cweb_reader reader, cweb_release release, void *stream) {
    struct MHD_Response *response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096,
        (MHD_ContentReaderCallback)reader, stream, (MHD_ContentReaderFreeCallback)release);
    if (response == NULL) { release(stream); return 0; }
    if (!add_headers(response, headers)) { MHD_destroy_response(response); return 0; }
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result == MHD_YES;
}
