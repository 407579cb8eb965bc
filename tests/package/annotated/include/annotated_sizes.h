/* From target_include_directories of the consumer: the lowering step must see it too. */
#define ANNOTATED_BLOCK 128
