// entryd-web: the HTTP door to entryd (doc/man/entryd-web.8). Wiring only; the logic is EntryWeb.
import EntryWeb

print("entryd-web: not built yet")
