/* ProcessPrng, which Rust's standard library (1.78 and later) imports from
   bcryptprimitives.dll, for wine 8 (Debian 12), which has no such DLL:
   the same random bytes through BCryptGenRandom. Test machines only. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
    data += n;
    len -= n;
  }
  return TRUE;
}
