# cmake -DINPUT=kernels.fatbin -DOUTPUT=kernels_fatbin.c -DNAME=test_kernels -P embed_fatbin.cmake
# Writes a C file defining NAME (the bytes, aligned for the driver) and NAME_size.
file(READ "${INPUT}" bytes HEX)
string(LENGTH "${bytes}" digits)
math(EXPR size "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${bytes}")
file(WRITE "${OUTPUT}"
  "/* Generated from ${INPUT} by embed_fatbin.cmake. */\n"
  "#include <stddef.h>\n"
  "_Alignas(16) const unsigned char ${NAME}[] = {${bytes}};\n"
  "const size_t ${NAME}_size = ${size};\n")
