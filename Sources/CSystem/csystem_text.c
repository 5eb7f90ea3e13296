#define _GNU_SOURCE
#include "csystem_text.h"
#include <locale.h>
#include <wchar.h>

int csystem_use_utf8_ctype(void) { return setlocale(LC_CTYPE, "C.UTF-8") != 0; }

int csystem_wcwidth(unsigned int scalar) { return wcwidth((wchar_t)scalar); }
