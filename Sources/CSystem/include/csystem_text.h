// Terminal text measurement: glibc's wcwidth(3), which Swift's Glibc module
// does not import (it is declared only under _XOPEN_SOURCE / _GNU_SOURCE).
#ifndef CSYSTEM_TEXT_H
#define CSYSTEM_TEXT_H

/// Sets LC_CTYPE to "C.UTF-8" (glibc ≥ 2.35 has it built in) so that wcwidth
/// knows Unicode widths. Process-wide; call once before measuring.
/// Returns 1 if the locale was set, 0 if it is unavailable.
int csystem_use_utf8_ctype(void);

/// wcwidth(3) of one Unicode scalar value: the number of terminal columns it
/// takes (0, 1 or 2), or -1 for a control or unassigned character.
int csystem_wcwidth(unsigned int scalar);
#endif
