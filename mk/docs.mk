# mk/docs.mk: install rules for the manual and the bash completion (issue 8).
# Included by the top-level Makefile (`include mk/docs.mk`); `make install`
# should depend on install-docs and `make uninstall` on uninstall-docs.
#
#   make install-docs     man pages entryd(8), entryd-web(8), entryctl(1), entryd.conf(5) and
#                         the bash completion of entryctl
#   make uninstall-docs   removes them
#
# Variables: PREFIX (default /usr/local), DESTDIR (staging root, default empty),
# MANDIR (default $(PREFIX)/share/man), BASHCOMPDIR (default
# $(PREFIX)/share/bash-completion/completions, where bash-completion loads
# completions on demand). The sources are plain man(7) roff in doc/man/: no
# tool is needed to build them.

PREFIX      ?= /usr/local
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL     ?= install

DOCS_MAN1 := doc/man/entryctl.1
DOCS_MAN5 := doc/man/entryd.conf.5
DOCS_MAN8 := doc/man/entryd.8 doc/man/entryd-web.8

.PHONY: install-docs uninstall-docs

install-docs:
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 0644 $(DOCS_MAN1) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 $(DOCS_MAN5) $(DESTDIR)$(MANDIR)/man5/
	$(INSTALL) -m 0644 $(DOCS_MAN8) $(DESTDIR)$(MANDIR)/man8/
	$(INSTALL) -m 0644 completion/entryctl.bash $(DESTDIR)$(BASHCOMPDIR)/entryctl

uninstall-docs:
	rm -f $(DESTDIR)$(MANDIR)/man1/entryctl.1 $(DESTDIR)$(MANDIR)/man5/entryd.conf.5 \
		$(DESTDIR)$(MANDIR)/man8/entryd.8 $(DESTDIR)$(MANDIR)/man8/entryd-web.8 $(DESTDIR)$(BASHCOMPDIR)/entryctl
