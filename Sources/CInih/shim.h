// libinih (Debian's libinih-dev, release 55): ini_parse_stream with our own
// reader, so that the caller counts lines and splits long ones (the library's
// INI_MAX_LINE is compiled in as 200 bytes).
#include <ini.h>
