/*
 * Jump consistent hash, reference function from Lamping & Veach,
 * "A Fast, Minimal Memory, Consistent Hash Algorithm" (arXiv 1406.2294),
 * transcribed to C (C++ functional casts written as C casts; same arithmetic).
 *
 * Prints "paper <key as unsigned decimal 64-bit> <buckets> <result>" for the
 * same (key, buckets) pairs, in the same order, as GuavaJumpVectors.java.
 *
 * Regenerate (from tests/golden; no -ffast-math):
 *   cc -O2 -o /tmp/jump_paper_reference jump_paper_reference.c
 *   /tmp/jump_paper_reference > jump_paper.txt
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

int32_t JumpConsistentHash(uint64_t key, int32_t num_buckets) {
  int64_t b = -1, j = 0;
  while (j < num_buckets) {
    b = j;
    key = key * 2862933555777941757ULL + 1;
    j = (b + 1) * ((double)(1LL << 31) / (double)((key >> 33) + 1));
  }
  return b;
}

static void emit(uint64_t key, int32_t buckets) {
  printf("paper %" PRIu64 " %" PRId32 " %" PRId32 "\n", key, buckets,
         JumpConsistentHash(key, buckets));
}

/* java.util.Random (legacy 48-bit LCG), enough for nextLong / nextInt(bound). */
static uint64_t jr_seed;
static void jr_init(int64_t seed) {
  jr_seed = ((uint64_t)seed ^ 0x5DEECE66DULL) & ((1ULL << 48) - 1);
}
static int32_t jr_next(int bits) {
  jr_seed = (jr_seed * 0x5DEECE66DULL + 0xBULL) & ((1ULL << 48) - 1);
  return (int32_t)(uint32_t)(jr_seed >> (48 - bits));
}
static int64_t jr_nextLong(void) {
  int64_t hi = jr_next(32);
  int64_t lo = jr_next(32);
  return (int64_t)(((uint64_t)hi << 32) + (uint64_t)lo);
}
static int32_t jr_nextInt(int32_t bound) { /* bound > 0, not a power of two */
  int32_t r = jr_next(31);
  int32_t m = bound - 1;
  int32_t u = r;
  /* Java: for (u = r; u - (r = u % bound) + m < 0; u = next(31)); (int wraps) */
  for (;;) {
    r = u % bound;
    if ((int64_t)u - r + m <= INT32_MAX) break;
    u = jr_next(31);
  }
  return r;
}

static const uint64_t A = 2862933555777941757ULL;

static uint64_t inverse(uint64_t x) { /* odd x, modulo 2^64 */
  uint64_t y = x;
  for (int i = 0; i < 6; i++) y *= 2 - x * y;
  return y;
}

int main(void) {
  printf("# Golden vectors: paper reference JumpConsistentHash (Lamping & Veach, arXiv 1406.2294)\n");
  printf("# Produced by tests/golden/jump_paper_reference.c:\n");
  printf("#   cc -O2 -o /tmp/jump_paper_reference jump_paper_reference.c\n");
  printf("#   /tmp/jump_paper_reference > jump_paper.txt\n");
  printf("# Format: paper <key as unsigned decimal 64-bit> <buckets> <result>\n");

  printf("# section a: fixed keys x buckets {1,2,3,10,100,1000,65536,2147483647}\n");
  uint64_t keysA[18];
  for (int i = 0; i <= 10; i++) keysA[i] = (uint64_t)i;
  keysA[11] = 0xdeadbeefULL;
  keysA[12] = 123456789ULL;
  keysA[13] = 0x7fffffffffffffffULL;
  keysA[14] = 0x8000000000000000ULL;
  keysA[15] = 0xffffffffffffffffULL;
  keysA[16] = 0x9999999999999999ULL;
  keysA[17] = 0x0ddc0ffeebadf00dULL;
  static const int32_t bucketsA[] = {1, 2, 3, 10, 100, 1000, 65536, 2147483647};
  for (int i = 0; i < 18; i++)
    for (int j = 0; j < 8; j++) emit(keysA[i], bucketsA[j]);

  printf("# section b: constructed keys, target state t in [2^64-2^33, 2^64) stepped back s = 1,2,3 times\n");
  printf("#   via state_prev = (state - 1) * a^-1 mod 2^64, a = 2862933555777941757\n");
  printf("# constructed: state after step s has top 31 bits all ones\n");
  uint64_t aInv = inverse(A);
  if (A * aInv != 1) return 1;
  uint64_t base = 0ULL - (1ULL << 33);
  const uint64_t targets[] = {
    0xffffffffffffffffULL, base, base + 12345ULL, 0xfffffffffffffffeULL,
    0ULL - (1ULL << 32), base + 0xdeadbeefULL,
  };
  static const int32_t bucketsB[] = {2, 10, 100, 1000, 65536, 1000000, 2147483647};
  for (int s = 1; s <= 3; s++) {
    for (int t = 0; t < 6; t++) {
      uint64_t k = targets[t];
      for (int i = 0; i < s; i++) k = (k - 1) * aInv;
      uint64_t st = k;
      for (int i = 0; i < s; i++) st = A * st + 1;
      if (st != targets[t] || (st >> 33) != 0x7fffffffULL) return 1;
      printf("# constructed: s=%d target state %" PRIu64 "\n", s, targets[t]);
      for (int j = 0; j < 7; j++) emit(k, bucketsB[j]);
    }
  }

  printf("# section c: 2000 random pairs, java.util.Random(42): key = nextLong(), buckets = 1 + nextInt(Integer.MAX_VALUE)\n");
  jr_init(42);
  for (int i = 0; i < 2000; i++) {
    uint64_t k = (uint64_t)jr_nextLong();
    int32_t b = 1 + jr_nextInt(INT32_MAX);
    emit(k, b);
  }
  /* (d) division-order rounding class */
  printf("# section d: keys whose second step rounds differently: Guava divides (c+1) / (x/2^31), the paper multiplies (b+1) * (2^31/x); found by a search over first states with top bits x1 - 1 = 2..6\n");
  emit(12262564975449168585ULL, 934944697);
  emit(12262564975449168585ULL, 934944698);
  emit(12262564975449168585ULL, 2147483647);
  emit(5525989919671439881ULL, 1161107302);
  emit(5525989919671439881ULL, 1161107301);
  emit(5525989919671439881ULL, 2147483647);
  emit(3420010807698254555ULL, 444750957);
  emit(3420010807698254555ULL, 2147483647);
  emit(9099836945303178435ULL, 1571076797);
  emit(9099836945303178435ULL, 2147483647);
  return 0;
}
