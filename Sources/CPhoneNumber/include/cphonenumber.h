// A plain C interface to libphonenumber (Debian libphonenumber-dev, C++), so
// that Swift never sees its headers (which pull in protobuf and abseil).
// Parsing, validation, number types and formatting follow the library's
// PhoneNumberUtil exactly (doc/design.md "Phone numbers").
#ifndef CPHONENUMBER_H
#define CPHONENUMBER_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What became of a number: valid, or the first check it failed, in the order
/// PhoneNumberUtil::Parse, IsPossibleNumberWithReason, IsValidNumber.
typedef enum cphone_outcome {
    /// Parsed, of a possible length and valid for its region.
    CPHONE_VALID = 0,
    /// Parse: not a number at all (NOT_A_NUMBER).
    CPHONE_NOT_A_NUMBER = 1,
    /// Parse or possibility: no such country calling code, or a national
    /// number with no default region to take one from (INVALID_COUNTRY_CODE).
    CPHONE_INVALID_COUNTRY_CODE = 2,
    /// Too few digits (TOO_SHORT_NSN, TOO_SHORT_AFTER_IDD, TOO_SHORT, and
    /// IS_POSSIBLE_LOCAL_ONLY: a number without its area code).
    CPHONE_TOO_SHORT = 3,
    /// Too many digits (TOO_LONG in parsing or possibility).
    CPHONE_TOO_LONG = 4,
    /// A length between the region's lengths that none of its numbers has (INVALID_LENGTH).
    CPHONE_INVALID_LENGTH = 5,
    /// A possible length, but no number of its region looks like it (IsValidNumber false).
    CPHONE_INVALID = 6,
} cphone_outcome;

/// PhoneNumberUtil::PhoneNumberType, in the library's order.
typedef enum cphone_type {
    CPHONE_FIXED_LINE = 0,
    CPHONE_MOBILE = 1,
    /// Regions (e.g. the US) where the two cannot be told apart by the number.
    CPHONE_FIXED_LINE_OR_MOBILE = 2,
    CPHONE_TOLL_FREE = 3,
    CPHONE_PREMIUM_RATE = 4,
    CPHONE_SHARED_COST = 5,
    CPHONE_VOIP = 6,
    CPHONE_PERSONAL_NUMBER = 7,
    CPHONE_PAGER = 8,
    CPHONE_UAN = 9,
    CPHONE_VOICEMAIL = 10,
    CPHONE_UNKNOWN = 11,
} cphone_type;

/// The result of ``cphone_parse``.
typedef struct cphone_result {
    /// Valid, or why not.
    cphone_outcome outcome;
    /// The number type; CPHONE_UNKNOWN unless the outcome is CPHONE_VALID.
    cphone_type type;
    /// The number in E.164 (`+8613800138000`, NUL-terminated) whenever it
    /// parsed (outcome not NOT_A_NUMBER, INVALID_COUNTRY_CODE from parsing,
    /// TOO_SHORT/TOO_LONG from parsing); empty otherwise.
    char e164[32];
    /// The region the number belongs to (ISO 3166-1 alpha-2, or `001` for
    /// non-geographic numbers) when valid; for a number that parsed but is
    /// not valid, the main region of its calling code; else empty.
    char region[4];
} cphone_result;

/// Parses `input` (UTF-8, as people type it: spaces, punctuation, full-width
/// digits, `+`, `00` or the region's international prefix, a trunk prefix)
/// with `default_region` (ISO 3166-1 alpha-2, e.g. `CN`; NULL or "ZZ" for
/// none) for numbers written without their country calling code, and checks it.
cphone_result cphone_parse(const char *input, const char *default_region);

/// Formats `e164` (a number as cphone_parse gives it) for people:
/// `national` 0 gives the INTERNATIONAL format (`+86 138 0013 8000`), 1 the
/// NATIONAL one (`138 0013 8000`). Writes at most `capacity` bytes with the
/// NUL into `out`; returns the length without the NUL, or -1 when `e164` is
/// not `+` and the digits of a known calling code and a national number of 2
/// to 17 digits, or `out` is too small. The number is built from its digits
/// as PhoneNumberUtil::Parse would read them (calling code, leading zeros),
/// not parsed again: Parse is the dearer half of a format.
int cphone_format(const char *e164, int national, char *out, size_t capacity);

/// The length (1 to 3) of the country calling code `digits` (ASCII digits,
/// NUL-terminated, without `+`) start with, when the library knows that code
/// and it is a geographic one (a region's, not `001`) and `digits` go on past
/// it; else 0. Calling codes are prefix-free (ITU-T E.164): at most one prefix is one.
int cphone_geographic_code_length(const char *digits);

/// The country calling code of `region` (ISO 3166-1 alpha-2: 86 for CN),
/// 0 when libphonenumber has no metadata for it.
int cphone_country_code_for_region(const char *region);

/// The version of the libphonenumber that is loaded, e.g. `8.12.57`.
/// The library has no version call; this is the version of the Debian
/// package that installed the loaded shared object (found with dladdr(3) and
/// the dpkg database), and failing that the version in its file name
/// (`libphonenumber.so.8.12` → `8.12`). Computed once; never NULL.
const char *cphone_library_version(void);

#ifdef __cplusplus
}
#endif
#endif
