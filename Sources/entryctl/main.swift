print("entryctl: not yet")
