# Cross build for s390x (64-bit, big-endian); tests run under qemu-s390x.
# Debian: crossbuild-essential-s390x qemu-user. Used by the cross-s390x preset.
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(KEYPLACE_CROSS_TRIPLE s390x-linux-gnu)
set(KEYPLACE_CROSS_QEMU_NAME qemu-s390x)
include("${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake")
