// Golden test vectors for JumpBackHash, taken from the real hash4j (Dynatrace) library:
// ConsistentHashing.jumpBackHash(PseudoRandomGeneratorProvider.splitMix64_V1()).getBucket(hash, n),
// which seeds SplitMix64 with the key's 64-bit hash and takes 1 <= n <= 2^31 - 1.
//
// hash4j is not part of this repository. Regenerate (from tests/golden, hash4j v0.30.0's
// src/main/java compiled with javac 17 alone into /tmp/h4j/classes):
//   javac -cp /tmp/h4j/classes -d /tmp/h4jv Hash4jJumpBackVectors.java
//   java -cp /tmp/h4j/classes:/tmp/h4jv Hash4jJumpBackVectors v0.30.0 > jumpback_hash4j_0.30.0.txt
//
// Output lines (numbers decimal, hashes as unsigned 64-bit):
//   jumpback <hash> <buckets> <bucket>
//   checksum_head <i> <buckets> <hash> <bucket>   (the first calls of the checksum loop)
//   checksum <calls> <splittable seed> komihash5_0 <hex> fnv1a64 <hex>
// Lines starting with '#' are comments.

import com.dynatrace.hash4j.consistent.ConsistentBucketHasher;
import com.dynatrace.hash4j.consistent.ConsistentHashing;
import com.dynatrace.hash4j.hashing.HashStream64;
import com.dynatrace.hash4j.hashing.Hashing;
import com.dynatrace.hash4j.random.PseudoRandomGeneratorProvider;
import java.util.SplittableRandom;

public class Hash4jJumpBackVectors {
  static final ConsistentBucketHasher HASHER =
      ConsistentHashing.jumpBackHash(PseudoRandomGeneratorProvider.splitMix64_V1());
  static final ConsistentBucketHasher OPTIMIZED = ConsistentHashing.jumpBackHashSplitMix64();

  static int bucket(long hash, int buckets) {
    int r = HASHER.getBucket(hash, buckets);
    // hash4j documents the two as equivalent; a disagreement would make the table ambiguous
    if (OPTIMIZED.getBucket(hash, buckets) != r) throw new AssertionError("variants disagree");
    return r;
  }

  static void emit(long hash, int buckets) {
    System.out.println(
        "jumpback " + Long.toUnsignedString(hash) + " " + buckets + " " + bucket(hash, buckets));
  }

  // FNV-1a 64 over the little-endian bytes of one int: the checksum a C++ test can recompute
  // without a komihash port.
  static long fnv(long h, int v) {
    for (int i = 0; i < 4; i++) {
      h ^= (v >>> (8 * i)) & 0xFF;
      h *= 0x100000001b3L;
    }
    return h;
  }

  public static void main(String[] args) {
    String version = args.length > 0 ? args[0] : "unknown";
    System.out.println(
        "# Golden vectors: hash4j ConsistentHashing.jumpBackHash(PseudoRandomGeneratorProvider.splitMix64_V1())");
    System.out.println("# hash4j " + version + " (src/main/java compiled with javac alone)");
    System.out.println("# Java: " + System.getProperty("java.version"));
    System.out.println("# Produced by tests/golden/Hash4jJumpBackVectors.java");
    System.out.println("# Every value was also checked equal to ConsistentHashing.jumpBackHashSplitMix64()");

    System.out.println("# section a: fixed hashes x fixed bucket counts");
    long[] hashesA = {
      0L, 1L, 2L, 3L, 42L, 0xdeadbeefL, 123456789L, Long.MAX_VALUE, Long.MIN_VALUE, -1L,
      0x9999999999999999L, 0x0ddc0ffeebadf00dL,
      0x7f7487ee708c8a96L, 0x6265648fbc797f25L, 0x85ef23a0b545d53bL, // ConsistentHashingDemo
    };
    int[] bucketsA = {
      1, 2, 3, 4, 5, 7, 8, 9, 10, 16, 17, 100, 1000, 65535, 65536, 65537, 1000000,
      1 << 30, (1 << 30) + 1, 2147483646, 2147483647,
    };
    for (long h : hashesA) for (int b : bucketsA) emit(h, b);

    System.out.println("# section b: hashes 0..15 at every bucket count 1..70 (growth step by step)");
    for (long h = 0; h < 16; h++) for (int b = 1; b <= 70; b++) emit(h, b);

    System.out.println(
        "# section c: 3000 pairs from SplittableRandom(0x6b657970); hash = nextLong(),"
            + " buckets = max(1, nextInt() >>> (nextInt() & 31)) (drawn before the hash)");
    SplittableRandom rnd = new SplittableRandom(0x6b657970L);
    for (int i = 0; i < 3000; i++) {
      int b = Math.max(1, rnd.nextInt() >>> (rnd.nextInt() & 31));
      long h = rnd.nextLong();
      emit(h, b);
    }

    System.out.println(
        "# section d: hash4j's AbstractConsistentBucketHasherTest.testCheckSum loop: SplittableRandom"
            + "(0x0a55871a9d9103b7), per call numBuckets = max(1, nextInt() >>> 1 >>> nextInt()),"
            + " hash = nextLong(), the bucket put as an int into komihash5_0().hashStream()");
    System.out.println(
        "#   hash4j pins the komihash value at 0x23d7a0d288cd67e7"
            + " (ConsistentJumpBackBucketHasherSplitMix64Test.CHECKSUM); fnv1a64 is FNV-1a 64 over"
            + " each bucket's 4 little-endian bytes, in call order");
    int numIterations = 1_000_000;
    long seed = 0x0a55871a9d9103b7L;
    SplittableRandom random = new SplittableRandom(seed);
    HashStream64 stream = Hashing.komihash5_0().hashStream();
    long f = 0xcbf29ce484222325L;
    for (int i = 0; i < numIterations; ++i) {
      int numBuckets = Math.max(1, random.nextInt() >>> 1 >>> random.nextInt());
      long hash = random.nextLong();
      int bucketIdx = bucket(hash, numBuckets);
      stream.putInt(bucketIdx);
      f = fnv(f, bucketIdx);
      if (i < 32) {
        System.out.println(
            "checksum_head " + i + " " + numBuckets + " " + Long.toUnsignedString(hash) + " " + bucketIdx);
      }
    }
    long komi = stream.getAsLong();
    if (komi != 0x23d7a0d288cd67e7L) throw new AssertionError("hash4j's pinned checksum not reproduced");
    System.out.println(
        "checksum " + numIterations + " " + Long.toUnsignedString(seed) + " komihash5_0 "
            + String.format("%016x", komi) + " fnv1a64 " + String.format("%016x", f));
  }
}
