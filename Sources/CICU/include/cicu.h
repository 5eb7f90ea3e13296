// A small C interface to ICU (Debian libicu-dev) with stable names: ICU's own
// C API renames every symbol by version behind macros (ucol_open is
// ucol_open_72 in ICU 72), which Swift cannot follow, so entryd calls these.
#ifndef CICU_H
#define CICU_H
#include <stdint.h>

/// ICU's version, e.g. "72.1" (U_ICU_VERSION of the headers built against).
const char *cicu_version(void);

/// Folds Traditional and variant Chinese characters in `text` (UTF-8, `length`
/// bytes) to Simplified with ICU's "Traditional-Simplified" transform
/// (CLDR's Hant-Hans rules, phrases included: 香港特別行政區 → 香港特别行政区,
/// 內蒙古 → 内蒙古); everything else is left as it is.
///
/// The transform is opened once per process, on first use (its rules are
/// compiled then: about 0.1 s), and used under a mutex (a transliterator is
/// not safe for concurrent use).
/// Writes the UTF-8 result to `out` (not NUL-terminated) and returns its
/// length in bytes; when that exceeds `capacity` nothing useful is written:
/// call again with a buffer of that size. Returns -1 when ICU fails (the
/// transform's data missing, input that is not UTF-8).
int32_t cicu_fold_simplified(const char *text, int32_t length, char *out, int32_t capacity);

/// The pinyin of the Han characters in `text` (UTF-8, `length` bytes), by
/// ICU's "Han-Latin; Latin-ASCII; Lower" transform: each Han character
/// becomes its most common reading without tone marks, syllables separated
/// by a space (黄志明 → "huang zhi ming"); Latin letters are lower-cased and
/// their accents dropped. Opened once per process on first use, used under a
/// mutex. Output, return value and errors as cicu_fold_simplified.
int32_t cicu_pinyin(const char *text, int32_t length, char *out, int32_t capacity);

/// Whether Han-Latin may read `code_point` otherwise than alone: it is named
/// in one of the transform's context rules (重 before 庆 is chóng, alone
/// zhòng), found in its rules when the transform is opened. A text of Han
/// characters none of which is contextual reads as each character read
/// alone, the readings separated by one space: callers may cache readings
/// per character. 1 as well when ICU failed to open the transform.
int cicu_pinyin_is_contextual(int32_t code_point);

/// Opens a collator for the "zh" locale (CLDR's default Chinese collation:
/// Han characters in pinyin order, Latin letters as in the root collation),
/// or NULL when ICU fails. Not safe for concurrent use: one per SQLite
/// connection. Close with cicu_collator_close.
void *cicu_collator_open_zh(void);

/// Closes a collator from cicu_collator_open_zh (NULL is ignored). Its
/// signature is SQLite's collation destructor (sqlite3_create_collation_v2).
void cicu_collator_close(void *collator);

/// Compares two UTF-8 strings with `collator`: negative, 0 or positive. Its
/// signature is SQLite's collation callback (sqlite3_create_collation_v2),
/// with the collator as the user data.
int cicu_collator_compare(void *collator, int length_a, const void *a, int length_b, const void *b);

/// The sort key of `text` (UTF-8, `length` bytes) under `collator`: bytes
/// that compare (memcmp, shorter first on a common prefix) as the collator
/// compares the texts (ICU's ucol_getSortKey guarantee), so an index of them
/// under SQLite's BINARY order is an index in pinyin order that any SQLite
/// can read and check (ucol_getSortKey, without its terminating NUL). Writes
/// at most `capacity` bytes to `out` and returns the key's length; a value
/// above `capacity - 1` when it did not fit (call again with that much room
/// and one more); -1 when ICU fails.
int32_t cicu_collator_sort_key(void *collator, const char *text, int32_t length, uint8_t *out, int32_t capacity);

/// The collator's version (ucol_getVersion) as text, e.g. "153.120.42": an
/// index built with one version must be rebuilt (REINDEX) under another.
/// Writes at most `capacity` bytes including the NUL to `out`.
void cicu_collator_version(void *collator, char *out, int32_t capacity);

#endif
