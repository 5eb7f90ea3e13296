// libidn2 (Debian's libidn2-dev, 2.3.3): IDNA2008 with the Unicode TR46
// mapping, for the domain of e-mail addresses (EmailAddress.swift).
#include <idn2.h>
