// The C interface of cphonenumber.h over libphonenumber's PhoneNumberUtil.
#include "cphonenumber.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cstring>
#include <fstream>
#include <string>

#include "phonenumbers/phonenumber.pb.h"
#include "phonenumbers/phonenumberutil.h"

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

namespace {

const PhoneNumberUtil &util() { return *PhoneNumberUtil::GetInstance(); }

void copy(const std::string &text, char *out, size_t capacity) {
    size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
}

cphone_outcome outcome(PhoneNumberUtil::ErrorType error) {
    switch (error) {
    case PhoneNumberUtil::INVALID_COUNTRY_CODE_ERROR: return CPHONE_INVALID_COUNTRY_CODE;
    case PhoneNumberUtil::TOO_SHORT_AFTER_IDD:
    case PhoneNumberUtil::TOO_SHORT_NSN: return CPHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_LONG_NSN: return CPHONE_TOO_LONG;
    default: return CPHONE_NOT_A_NUMBER;
    }
}

cphone_outcome outcome(PhoneNumberUtil::ValidationResult result) {
    switch (result) {
    case PhoneNumberUtil::IS_POSSIBLE: return CPHONE_VALID;
    case PhoneNumberUtil::INVALID_COUNTRY_CODE: return CPHONE_INVALID_COUNTRY_CODE;
    case PhoneNumberUtil::IS_POSSIBLE_LOCAL_ONLY:
    case PhoneNumberUtil::TOO_SHORT: return CPHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_LONG: return CPHONE_TOO_LONG;
    default: return CPHONE_INVALID_LENGTH;
    }
}

/// The resolved path of the shared object that holds PhoneNumberUtil::GetInstance.
std::string loaded_library_path() {
    Dl_info info;
    void *symbol = reinterpret_cast<void *>(&PhoneNumberUtil::GetInstance);
    if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
    char resolved[PATH_MAX];
    return realpath(info.dli_fname, resolved) ? std::string(resolved) : std::string(info.dli_fname);
}

/// The dpkg package (`libphonenumber8:amd64`) whose file list holds `path`
/// (compared after resolving links, as /lib is /usr/lib on merged systems).
std::string owning_package(const std::string &path) {
    const std::string dir = "/var/lib/dpkg/info/";
    DIR *listing = opendir(dir.c_str());
    if (!listing) return "";
    std::string found;
    while (dirent *item = readdir(listing)) {
        std::string name = item->d_name;
        const std::string suffix = ".list";
        if (name.rfind("libphonenumber", 0) != 0 || name.size() <= suffix.size()
            || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
        std::ifstream list(dir + name);
        for (std::string line; found.empty() && std::getline(list, line);) {
            char resolved[PATH_MAX];
            if (line == path || (realpath(line.c_str(), resolved) && path == resolved)) {
                found = name.substr(0, name.size() - suffix.size());
            }
        }
        if (!found.empty()) break;
    }
    closedir(listing);
    return found;
}

/// The upstream part of the installed version of `package` (`8.12.57` of
/// `8.12.57+ds-3`) from /var/lib/dpkg/status, or "".
std::string dpkg_upstream_version(std::string package) {
    std::string arch;
    size_t colon = package.find(':');
    if (colon != std::string::npos) { arch = package.substr(colon + 1); package.resize(colon); }
    std::ifstream status("/var/lib/dpkg/status");
    bool match = false, archMatch = arch.empty();
    std::string version;
    for (std::string line; std::getline(status, line);) {
        if (line.empty()) {
            if (match && archMatch && !version.empty()) break;
            match = false; archMatch = arch.empty(); version.clear();
        } else if (line.rfind("Package: ", 0) == 0) {
            match = line.substr(9) == package;
        } else if (line.rfind("Architecture: ", 0) == 0) {
            archMatch = arch.empty() || line.substr(14) == arch;
        } else if (line.rfind("Version: ", 0) == 0) {
            version = line.substr(9);
        }
    }
    if (!(match && archMatch)) return "";
    size_t epoch = version.find(':');
    if (epoch != std::string::npos) version = version.substr(epoch + 1);
    // Debian revision after the last '-', repack suffix ("+ds") after the first '+'.
    size_t dash = version.rfind('-');
    if (dash != std::string::npos) version.resize(dash);
    size_t plus = version.find('+');
    if (plus != std::string::npos) version.resize(plus);
    size_t tilde = version.find('~');
    if (tilde != std::string::npos) version.resize(tilde);
    return version;
}

std::string library_version() {
    std::string path = loaded_library_path();
    std::string soname;  // "8.12" of ".../libphonenumber.so.8.12"
    size_t so = path.rfind(".so.");
    if (so != std::string::npos) soname = path.substr(so + 4);
    std::string package = owning_package(path);
    std::string version = package.empty() ? "" : dpkg_upstream_version(package);
    // The package's version must be the file's (8.12.57 for libphonenumber.so.8.12).
    if (!version.empty() && (soname.empty() || version.rfind(soname + ".", 0) == 0 || version == soname)) return version;
    return soname.empty() ? "unknown" : soname;
}

}  // namespace

extern "C" cphone_result cphone_parse(const char *input, const char *default_region) {
    cphone_result result;
    std::memset(&result, 0, sizeof result);
    result.type = CPHONE_UNKNOWN;
    PhoneNumber number;
    PhoneNumberUtil::ErrorType error = util().Parse(input ? input : "", default_region ? default_region : "ZZ", &number);
    if (error != PhoneNumberUtil::NO_PARSING_ERROR) {
        result.outcome = outcome(error);
        return result;
    }
    std::string e164;
    util().Format(number, PhoneNumberUtil::E164, &e164);
    copy(e164, result.e164, sizeof result.e164);
    std::string region;
    util().GetRegionCodeForCountryCode(number.country_code(), &region);
    copy(region == "ZZ" ? "" : region, result.region, sizeof result.region);
    result.outcome = outcome(util().IsPossibleNumberWithReason(number));
    if (result.outcome != CPHONE_VALID) return result;
    // IsValidNumber(number) is IsValidNumberForRegion(number, GetRegionCodeForNumber(number)),
    // which is GetNumberTypeHelper(...) != UNKNOWN for that region's metadata: exactly
    // GetNumberType(number) != UNKNOWN. One call gives both (each matches the national
    // number against every type's pattern, the dearest step of a parse).
    PhoneNumberUtil::PhoneNumberType type = util().GetNumberType(number);
    if (type == PhoneNumberUtil::UNKNOWN) {
        result.outcome = CPHONE_INVALID;
        return result;
    }
    result.type = static_cast<cphone_type>(type);
    util().GetRegionCodeForNumber(number, &region);
    copy(region, result.region, sizeof result.region);
    return result;
}

namespace {

/// The PhoneNumber that PhoneNumberUtil::Parse(e164, "ZZ") gives for a number
/// in E.164 form (`+`, calling code, national significant number: what
/// cphone_parse stores), built from its digits without the parser's regular
/// expressions: the calling code is the prefix of 1 to 3 digits that the
/// library knows (calling codes are prefix-free, ITU-T E.164; the library's
/// ExtractCountryCode takes the same), and leading zeros of the national
/// number are kept as Parse keeps them (italian_leading_zero,
/// number_of_leading_zeros). False for anything else.
bool from_e164(const char *e164, PhoneNumber *number) {
    if (!e164 || e164[0] != '+') return false;
    const char *digits = e164 + 1;
    size_t length = std::strlen(digits);
    if (length < 3 || length > 20) return false;
    for (size_t i = 0; i < length; i++) if (digits[i] < '0' || digits[i] > '9') return false;
    int code = 0;
    size_t code_length = 0;
    for (size_t i = 1; i <= 3 && i < length; i++) {
        code = code * 10 + (digits[i - 1] - '0');
        std::string region;
        util().GetRegionCodeForCountryCode(code, &region);
        if (region != "ZZ") { code_length = i; break; }
    }
    if (code_length == 0 || digits[0] == '0') return false;
    const char *national = digits + code_length;
    size_t national_length = length - code_length;
    // Parse's bounds on a national significant number (kMinLengthForNsn, kMaxLengthForNsn).
    if (national_length < 2 || national_length > 17) return false;
    uint64_t value = 0;
    for (size_t i = 0; i < national_length; i++) value = value * 10 + static_cast<uint64_t>(national[i] - '0');
    number->set_country_code(code);
    number->set_national_number(value);
    if (national_length > 1 && national[0] == '0') {
        number->set_italian_leading_zero(true);
        size_t zeros = 1;
        while (zeros < national_length - 1 && national[zeros] == '0') zeros++;
        if (zeros != 1) number->set_number_of_leading_zeros(static_cast<int32_t>(zeros));
    }
    return true;
}

}  // namespace

extern "C" int cphone_format(const char *e164, int national, char *out, size_t capacity) {
    PhoneNumber number;
    if (!from_e164(e164, &number)) return -1;
    std::string text;
    util().Format(number, national ? PhoneNumberUtil::NATIONAL : PhoneNumberUtil::INTERNATIONAL, &text);
    if (text.size() + 1 > capacity) return -1;
    copy(text, out, capacity);
    return static_cast<int>(text.size());
}

extern "C" int cphone_geographic_code_length(const char *digits) {
    if (!digits) return 0;
    size_t length = std::strlen(digits);
    int code = 0;
    for (size_t i = 1; i <= 3 && i < length; i++) {
        if (digits[i - 1] < '0' || digits[i - 1] > '9') return 0;
        code = code * 10 + (digits[i - 1] - '0');
        std::string region;
        util().GetRegionCodeForCountryCode(code, &region);
        if (region != "ZZ") return region == "001" ? 0 : static_cast<int>(i);
    }
    return 0;
}

extern "C" int cphone_country_code_for_region(const char *region) {
    return region ? util().GetCountryCodeForRegion(region) : 0;
}

extern "C" const char *cphone_library_version(void) {
    static const std::string version = library_version();
    return version.c_str();
}
