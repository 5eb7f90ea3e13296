// libsodium (Debian's libsodium-dev, 1.0.18): Argon2id password hashing
// (crypto_pwhash_str), random bytes, constant-time comparison (sodium_memcmp).
#include <sodium.h>
