/* Configure-time probe (fuzz/meson.build): clang can build a libFuzzer target with ASan and UBSan. */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    (void)data;
    (void)size;
    return 0;
}
