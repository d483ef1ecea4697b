# Cross build for i386 (32-bit: 32-bit size_t and long, x87 floating point); tests run under
# qemu-i386. Debian: crossbuild-essential-i386 qemu-user. Used by the cross-i386 preset.
set(CMAKE_SYSTEM_PROCESSOR i686)
set(KEYPLACE_CROSS_TRIPLE i686-linux-gnu)
set(KEYPLACE_CROSS_QEMU_NAME qemu-i386)
# x87 arithmetic carries excess precision (FLT_EVAL_METHOD 2), which would change the placements
# that rest on IEEE-754 double (jump, and the ketama, Envoy and redis compat modes refuse it):
# double arithmetic in SSE2 registers, as on every x86 CPU since 2001.
set(KEYPLACE_CROSS_CXX_FLAGS "-msse2 -mfpmath=sse")
include("${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake")
