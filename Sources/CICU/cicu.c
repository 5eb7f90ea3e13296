// ICU behind stable names (include/cicu.h).
#include "cicu.h"
#include <pthread.h>
#include <stdlib.h>
#include <unicode/ucol.h>
#include <unicode/uloc.h>
#include <unicode/ustring.h>
#include <unicode/uset.h>
#include <unicode/utrans.h>
#include <unicode/uversion.h>

const char *cicu_version(void) { return U_ICU_VERSION; }

static pthread_once_t fold_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t fold_lock = PTHREAD_MUTEX_INITIALIZER;
static UTransliterator *fold_transform;

static void fold_open(void) {
    UErrorCode status = U_ZERO_ERROR;
    UChar id[32];
    u_uastrcpy(id, "Traditional-Simplified");
    fold_transform = utrans_openU(id, -1, UTRANS_FORWARD, NULL, 0, NULL, &status);
    if (U_FAILURE(status)) fold_transform = NULL;
}

static pthread_once_t pinyin_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t pinyin_lock = PTHREAD_MUTEX_INITIALIZER;
static UTransliterator *pinyin_transform;

/// The characters whose reading Han-Latin takes from their neighbours: every
/// character named in one of its rules that is not `[set] > reading;` (the
/// context rules, `{重}' '?庆 > chóng;` in ICU 72). NULL until pinyin_open.
static USet *pinyin_contextual;

/// Adds to `set` every code point a rule's text names: `\uXXXX`, `\UXXXXXXXX`
/// escapes and characters outside ASCII.
static void add_named(USet *set, const UChar *text, int32_t length) {
    for (int32_t i = 0; i < length; i++) {
        if (text[i] == '\\' && i + 1 < length && (text[i + 1] == 'u' || text[i + 1] == 'U')) {
            int32_t digits = text[i + 1] == 'u' ? 4 : 8;
            UChar32 c = 0;
            int32_t j = i + 2;
            for (; j < i + 2 + digits && j < length; j++) {
                UChar h = text[j];
                int v = h >= '0' && h <= '9' ? h - '0' : h >= 'A' && h <= 'F' ? h - 'A' + 10 : h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
                if (v < 0) break;
                c = c * 16 + v;
            }
            if (j == i + 2 + digits) uset_add(set, c);
            i = j - 1;
        } else if (text[i] > 0x7F) {
            UChar32 c;
            int32_t at = i;
            U16_NEXT(text, at, length, c);
            uset_add(set, c);
            i = at - 1;
        }
    }
}

static void pinyin_open(void) {
    UErrorCode status = U_ZERO_ERROR;
    UChar id[64];
    u_uastrcpy(id, "Han-Latin; Latin-ASCII; Lower");
    pinyin_transform = utrans_openU(id, -1, UTRANS_FORWARD, NULL, 0, NULL, &status);
    if (U_FAILURE(status)) {
        pinyin_transform = NULL;
        return;
    }
    // The context rules of Han-Latin itself (its rules as text: one rule per line).
    UChar hid[16];
    u_uastrcpy(hid, "Han-Latin");
    status = U_ZERO_ERROR;
    UTransliterator *han = utrans_openU(hid, -1, UTRANS_FORWARD, NULL, 0, NULL, &status);
    if (U_FAILURE(status)) return;
    int32_t length = utrans_toRules(han, 1, NULL, 0, &status);
    UChar *rules = status == U_BUFFER_OVERFLOW_ERROR ? malloc(sizeof(UChar) * (size_t)(length + 1)) : NULL;
    status = U_ZERO_ERROR;
    if (rules != NULL) utrans_toRules(han, 1, rules, length + 1, &status);
    utrans_close(han);
    if (rules == NULL || U_FAILURE(status)) {
        free(rules);
        return;
    }
    USet *contextual = uset_openEmpty();
    for (int32_t start = 0; start < length;) {
        int32_t end = start;
        while (end < length && rules[end] != '\n') end++;
        int32_t arrow = start;
        while (arrow < end && rules[arrow] != '>') arrow++;
        // Neither a `[set] > reading;` rule, nor `::Han-Spacedhan();`, nor a comment or a blank line.
        UChar first = start < end ? rules[start] : ' ';
        if (first != '[' && first != ':' && first != '#' && first != ' ' && first != '\r')
            add_named(contextual, rules + start, arrow - start);
        start = end + 1;
    }
    free(rules);
    uset_freeze(contextual);
    pinyin_contextual = contextual;
}

int cicu_pinyin_is_contextual(int32_t code_point) {
    pthread_once(&pinyin_once, pinyin_open);
    // Unknown (ICU failed): every character is, so callers take ICU's whole-text path.
    return pinyin_contextual == NULL || uset_contains(pinyin_contextual, code_point);
}

/// Runs `transform` (under `lock`) over `text`, as cicu_fold_simplified describes.
static int32_t transform_utf8(UTransliterator *transform, pthread_mutex_t *lock, const char *text, int32_t length,
                              char *out, int32_t capacity, int32_t growth) {
    if (transform == NULL || length < 0) return -1;
    UErrorCode status = U_ZERO_ERROR;
    // UTF-16 needs at most one unit per UTF-8 byte; room to grow for output
    // longer than the input (`growth` units per input byte, and a few more).
    int32_t units_capacity = growth * length + 16;
    UChar stack[256];
    UChar *units = units_capacity <= 256 ? stack : malloc(sizeof(UChar) * (size_t)units_capacity);
    if (units == NULL) return -1;
    int32_t units_length = 0;
    u_strFromUTF8(units, units_capacity, &units_length, text, length, &status);
    if (U_SUCCESS(status)) {
        int32_t limit = units_length;
        pthread_mutex_lock(lock);
        utrans_transUChars(transform, units, &units_length, units_capacity, 0, &limit, &status);
        pthread_mutex_unlock(lock);
    }
    int32_t written = -1;
    if (U_SUCCESS(status)) {
        u_strToUTF8(out, capacity, &written, units, units_length, &status);
        if (status == U_BUFFER_OVERFLOW_ERROR || status == U_STRING_NOT_TERMINATED_WARNING) status = U_ZERO_ERROR;
        if (U_FAILURE(status)) written = -1;
    }
    if (units != stack) free(units);
    return written;
}

int32_t cicu_fold_simplified(const char *text, int32_t length, char *out, int32_t capacity) {
    pthread_once(&fold_once, fold_open);
    return transform_utf8(fold_transform, &fold_lock, text, length, out, capacity, 2);
}

int32_t cicu_pinyin(const char *text, int32_t length, char *out, int32_t capacity) {
    pthread_once(&pinyin_once, pinyin_open);
    // A Han character (3 UTF-8 bytes, 1 unit) becomes a syllable and a space: at most 7 units.
    return transform_utf8(pinyin_transform, &pinyin_lock, text, length, out, capacity, 4);
}

void *cicu_collator_open_zh(void) {
    UErrorCode status = U_ZERO_ERROR;
    UCollator *collator = ucol_open("zh", &status);
    if (U_FAILURE(status)) {
        if (collator) ucol_close(collator);
        return NULL;
    }
    return collator;
}

void cicu_collator_close(void *collator) {
    if (collator) ucol_close((UCollator *)collator);
}

int cicu_collator_compare(void *collator, int length_a, const void *a, int length_b, const void *b) {
    UErrorCode status = U_ZERO_ERROR;
    UCollationResult result = ucol_strcollUTF8((const UCollator *)collator, (const char *)a, length_a,
                                               (const char *)b, length_b, &status);
    if (U_FAILURE(status)) {
        // Not UTF-8 (SQLite hands over the stored bytes): order by the bytes, so the order stays total.
        int n = length_a < length_b ? length_a : length_b;
        for (int i = 0; i < n; i++) {
            unsigned char x = ((const unsigned char *)a)[i], y = ((const unsigned char *)b)[i];
            if (x != y) return x < y ? -1 : 1;
        }
        return length_a < length_b ? -1 : length_a > length_b;
    }
    return (int)result;
}

int32_t cicu_collator_sort_key(void *collator, const char *text, int32_t length, uint8_t *out, int32_t capacity) {
    if (collator == NULL || length < 0) return -1;
    UErrorCode status = U_ZERO_ERROR;
    UChar stack[256];
    UChar *units = length <= 256 ? stack : malloc(sizeof(UChar) * (size_t)length);
    if (units == NULL) return -1;
    int32_t units_length = 0;
    u_strFromUTF8(units, length <= 256 ? 256 : length, &units_length, text, length, &status);
    int32_t written = -1;
    if (U_SUCCESS(status)) {
        // ucol_getSortKey counts the key's terminating NUL: the key proper is one byte shorter.
        int32_t size = ucol_getSortKey((UCollator *)collator, units, units_length, out, capacity);
        written = size <= 0 ? -1 : size <= capacity ? size - 1 : size;
    }
    if (units != stack) free(units);
    return written;
}

void cicu_collator_version(void *collator, char *out, int32_t capacity) {
    UVersionInfo version;
    char text[U_MAX_VERSION_STRING_LENGTH];
    ucol_getVersion((const UCollator *)collator, version);
    u_versionToString(version, text);
    int32_t i = 0;
    for (; i + 1 < capacity && text[i]; i++) out[i] = text[i];
    if (capacity > 0) out[i] = 0;
}
