# Warnings on the project's own targets only (generated protobuf code is exempt); they are
# errors in CI and development (GPUPROBE_WERROR, on in the `release` preset that .ci/run uses),
# never in a user's own build, where another compiler or -O3 may warn where GCC 12 -O2 did not.
# GCC 12 warns about members left out of a designated initializer even when they have default
# member initializers; that idiom is used on purpose, so the warning is off.
option(GPUPROBE_WERROR "Treat compiler warnings as errors on gpuprobe's own targets" OFF)

function(gpuprobe_strict target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${GPUPROBE_WERROR}>>:-Werror>)
endfunction()
