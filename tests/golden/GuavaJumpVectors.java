// Golden test vectors for jump consistent hash, taken from the real Guava
// library: com.google.common.hash.Hashing.consistentHash(long, int).
//
// Regenerate (from tests/golden, with Debian libguava-java 31.1 and Java 17):
//   javac -cp /usr/share/java/guava.jar -d /tmp/gjv GuavaJumpVectors.java
//   java -cp /usr/share/java/guava.jar:/tmp/gjv GuavaJumpVectors > guava_jump_31.1.txt
//
// Output lines: "guava <key as unsigned decimal 64-bit> <buckets> <result>".
// Lines starting with '#' are comments.  The companion C program
// jump_paper_reference.c prints the same (key, buckets) pairs in the same
// order with the paper's reference function.

import com.google.common.hash.Hashing;
import java.util.Random;

public class GuavaJumpVectors {
  static final long A = 2862933555777941757L; // LCG multiplier (odd)

  static void emit(long key, int buckets) {
    int r = Hashing.consistentHash(key, buckets);
    System.out.println("guava " + Long.toUnsignedString(key) + " " + buckets + " " + r);
  }

  // Multiplicative inverse of an odd x modulo 2^64 (Newton iteration).
  static long inverse(long x) {
    long y = x; // correct to 3 bits for odd x
    for (int i = 0; i < 6; i++) {
      y *= 2 - x * y;
    }
    return y;
  }

  public static void main(String[] args) {
    String version = Hashing.class.getPackage().getImplementationVersion();
    System.out.println("# Golden vectors: Guava Hashing.consistentHash(long, int)");
    System.out.println("# Guava jar: /usr/share/java/guava.jar (Debian libguava-java 31.1-1)"
        + (version != null ? ", manifest Implementation-Version " + version : ""));
    System.out.println("# Java: " + System.getProperty("java.version"));
    System.out.println("# Produced by tests/golden/GuavaJumpVectors.java:");
    System.out.println("#   javac -cp /usr/share/java/guava.jar -d /tmp/gjv GuavaJumpVectors.java");
    System.out.println("#   java -cp /usr/share/java/guava.jar:/tmp/gjv GuavaJumpVectors > guava_jump_31.1.txt");
    System.out.println("# Format: guava <key as unsigned decimal 64-bit> <buckets> <result>");

    // (a) fixed keys x fixed bucket counts
    System.out.println("# section a: fixed keys x buckets {1,2,3,10,100,1000,65536,2147483647}");
    long[] keysA = new long[11 + 7];
    for (int i = 0; i <= 10; i++) keysA[i] = i;
    keysA[11] = 0xdeadbeefL;
    keysA[12] = 123456789L;
    keysA[13] = Long.MAX_VALUE;          // 2^63 - 1
    keysA[14] = Long.MIN_VALUE;          // 2^63
    keysA[15] = -1L;                     // 2^64 - 1
    keysA[16] = 0x9999999999999999L;
    keysA[17] = 0x0ddc0ffeebadf00dL;
    int[] bucketsA = {1, 2, 3, 10, 100, 1000, 65536, 2147483647};
    for (long k : keysA) for (int b : bucketsA) emit(k, b);

    // (b) constructed keys: LCG state after step s has its top 31 bits all ones
    System.out.println("# section b: constructed keys, target state t in [2^64-2^33, 2^64) stepped back s = 1,2,3 times");
    System.out.println("#   via state_prev = (state - 1) * a^-1 mod 2^64, a = 2862933555777941757");
    System.out.println("# constructed: state after step s has top 31 bits all ones");
    long aInv = inverse(A);
    if (A * aInv != 1L) throw new AssertionError("bad inverse");
    long base = -(1L << 33); // 2^64 - 2^33
    long[] targets = {
      -1L,                     // 2^64 - 1
      base,                    // 2^64 - 2^33
      base + 12345L,           // 2^64 - 2^33 + 12345
      -2L,                     // 2^64 - 2
      -(1L << 32),             // 2^64 - 2^32
      base + 0xdeadbeefL,      // 2^64 - 2^33 + 0xdeadbeef
    };
    int[] bucketsB = {2, 10, 100, 1000, 65536, 1000000, 2147483647};
    for (int s = 1; s <= 3; s++) {
      for (long t : targets) {
        long k = t;
        for (int i = 0; i < s; i++) k = (k - 1) * aInv;
        // sanity check: stepping forward s times reaches t
        long st = k;
        for (int i = 0; i < s; i++) st = A * st + 1;
        if (st != t || (st >>> 33) != 0x7fffffffL) throw new AssertionError("construction failed");
        System.out.println("# constructed: s=" + s + " target state " + Long.toUnsignedString(t));
        for (int b : bucketsB) emit(k, b);
      }
    }

    // (c) fixed-seed random pairs
    System.out.println("# section c: 2000 random pairs, java.util.Random(42): key = nextLong(), buckets = 1 + nextInt(Integer.MAX_VALUE)");
    Random rnd = new Random(42);
    for (int i = 0; i < 2000; i++) {
      long k = rnd.nextLong();
      int b = 1 + rnd.nextInt(Integer.MAX_VALUE);
      emit(k, b);
    }

    // (d) division-order rounding class
    System.out.println("# section d: keys whose second step rounds differently: Guava divides (c+1) / (x/2^31), the paper multiplies (b+1) * (2^31/x); found by a search over first states with top bits x1 - 1 = 2..6");
    emit(-6184179098260383031L, 934944697);
    emit(-6184179098260383031L, 934944698);
    emit(-6184179098260383031L, 2147483647);
    emit(5525989919671439881L, 1161107302);
    emit(5525989919671439881L, 1161107301);
    emit(5525989919671439881L, 2147483647);
    emit(3420010807698254555L, 444750957);
    emit(3420010807698254555L, 2147483647);
    emit(9099836945303178435L, 1571076797);
    emit(9099836945303178435L, 2147483647);
  }
}
