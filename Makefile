# entryd: build, install and uninstall (GNU make).
#
#   make                      swift build -c release
#   make install              binaries (entryd, entryctl, entryd-web), systemd
#                             units, sysusers.d/tmpfiles.d,
#                             /etc/entryd (configuration and forms), docs (README.md,
#                             doc/guide.md, doc/hub.md, the manual) and data
#   make uninstall            removes what install put (keeps /etc/entryd if changed
#                             and /var/lib/entryd, the database)
#   make verify-units         systemd-analyze verify of the units before install,
#                             with ExecStart= naming the binary in BUILD_DIR
#
# Variables: PREFIX (default /usr/local), DESTDIR (staging root, default empty),
# SYSCONFDIR (default /etc), BUILD_DIR (where the built binaries are, default
# the release build), BUILD=no (install what BUILD_DIR holds without building).
# The units' paths follow PREFIX and SYSCONFDIR.

PREFIX      ?= /usr/local
SYSCONFDIR  ?= /etc
BINDIR      ?= $(PREFIX)/bin
DATADIR     ?= $(PREFIX)/share/entryd
DOCDIR      ?= $(PREFIX)/share/doc/entryd
# Debian puts units of packages in /lib/systemd/system; local installs in $(PREFIX)/lib/systemd/system.
UNITDIR     ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
CONFDIR     ?= $(SYSCONFDIR)/entryd
BUILD_DIR   ?= .build/release
BUILD       ?= yes
INSTALL     ?= install
# The systemd units (systemd/): entryd and entryd-web, each a socket and a service.
UNITS       := entryd.service entryd.socket entryd@.service entryd@.socket entryd-web.service entryd-web.socket

.PHONY: all build install uninstall verify-units

all: build

build:
ifeq ($(BUILD),yes)
	swift build -c release --product entryd
	swift build -c release --product entryctl
	swift build -c release --product entryd-web
endif

install: build install-docs
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
		$(DESTDIR)$(CONFDIR)/forms $(DESTDIR)$(CONFDIR)/entryd.conf.d $(DESTDIR)$(DATADIR)/data $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 0755 $(BUILD_DIR)/entryd $(BUILD_DIR)/entryctl $(BUILD_DIR)/entryd-web $(DESTDIR)$(BINDIR)/
	for unit in $(UNITS); do \
		sed -e 's|/usr/local/bin/|$(BINDIR)/|g' -e 's|/etc/entryd/|$(CONFDIR)/|g' \
		    -e 's|/usr/local/share/doc/entryd/|$(DOCDIR)/|g' systemd/$$unit > $(DESTDIR)$(UNITDIR)/$$unit; \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$unit; \
	done
	$(INSTALL) -m 0644 systemd/sysusers.d/entryd.conf $(DESTDIR)$(SYSUSERSDIR)/entryd.conf
	$(INSTALL) -m 0644 systemd/tmpfiles.d/entryd.conf $(DESTDIR)$(TMPFILESDIR)/entryd.conf
	# Configuration: never overwrite an administrator's copy.
	test -e $(DESTDIR)$(CONFDIR)/entryd.conf || $(INSTALL) -m 0644 config/entryd.conf $(DESTDIR)$(CONFDIR)/entryd.conf
	test -e $(DESTDIR)$(CONFDIR)/entryd-web.conf || $(INSTALL) -m 0644 config/entryd-web.conf $(DESTDIR)$(CONFDIR)/entryd-web.conf
	test -e $(DESTDIR)$(CONFDIR)/hub.conf || $(INSTALL) -m 0644 config/hub.conf $(DESTDIR)$(CONFDIR)/hub.conf
	for form in config/forms/*.conf; do \
		test -e $(DESTDIR)$(CONFDIR)/forms/$$(basename $$form) || $(INSTALL) -m 0644 $$form $(DESTDIR)$(CONFDIR)/forms/; \
	done
	# The reference data is compiled into the binaries; the tables and their provenance are installed for reference.
	$(INSTALL) -m 0644 data/*.tsv data/*.md $(DESTDIR)$(DATADIR)/data/
	$(INSTALL) -m 0644 README.md doc/guide.md doc/hub.md doc/monitoring.md $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -d $(DESTDIR)$(DOCDIR)/examples
	$(INSTALL) -m 0644 doc/monitoring/entryd-alerts.yml $(DESTDIR)$(DOCDIR)/examples/

# The units as they are name /usr/local/bin/entryd, which does not exist before
# install; verify copies whose paths name the build (BUILD=no: the build as it is).
verify-units: build
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	bin=$$(cd $(BUILD_DIR) && pwd) && \
	for unit in $(UNITS); do \
		sed -e "s|/usr/local/bin/|$$bin/|g" systemd/$$unit > "$$tmp/$$unit"; \
	done && \
	systemd-analyze verify --man=no "$$tmp/entryd.socket" "$$tmp/entryd.service" && \
	echo "entryd.service and entryd.socket: systemd-analyze verify passed (ExecStart=$$bin/entryd)" && \
	systemd-analyze verify --man=no "$$tmp/entryd-web.socket" "$$tmp/entryd-web.service" && \
	echo "entryd-web.service and entryd-web.socket: systemd-analyze verify passed (ExecStart=$$bin/entryd-web)" && \
	cp "$$tmp/entryd@.socket" "$$tmp/entryd@hub-1.socket" && cp "$$tmp/entryd@.service" "$$tmp/entryd@hub-1.service" && \
	systemd-analyze verify --man=no "$$tmp/entryd@hub-1.socket" "$$tmp/entryd@hub-1.service" && \
	echo "entryd@.service and entryd@.socket (as entryd@hub-1): systemd-analyze verify passed"

uninstall: uninstall-docs
	rm -f $(DESTDIR)$(BINDIR)/entryd $(DESTDIR)$(BINDIR)/entryctl $(DESTDIR)$(BINDIR)/entryd-web
	for unit in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$unit; done
	rm -f $(DESTDIR)$(SYSUSERSDIR)/entryd.conf $(DESTDIR)$(TMPFILESDIR)/entryd.conf
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)
	# Configuration files are removed only when unchanged; the database in /var/lib/entryd stays.
	cmp -s config/entryd.conf $(DESTDIR)$(CONFDIR)/entryd.conf && rm -f $(DESTDIR)$(CONFDIR)/entryd.conf || true
	cmp -s config/entryd-web.conf $(DESTDIR)$(CONFDIR)/entryd-web.conf && rm -f $(DESTDIR)$(CONFDIR)/entryd-web.conf || true
	cmp -s config/hub.conf $(DESTDIR)$(CONFDIR)/hub.conf && rm -f $(DESTDIR)$(CONFDIR)/hub.conf || true
	for form in config/forms/*.conf; do \
		cmp -s $$form $(DESTDIR)$(CONFDIR)/forms/$$(basename $$form) && rm -f $(DESTDIR)$(CONFDIR)/forms/$$(basename $$form) || true; \
	done
	-rmdir $(DESTDIR)$(CONFDIR)/forms $(DESTDIR)$(CONFDIR)/entryd.conf.d $(DESTDIR)$(CONFDIR) 2>/dev/null

# The manual and the bash completion (doc/man, completion/).
include mk/docs.mk
