# Warnings are errors on the project's own targets only (generated protobuf code is exempt).
# GCC 12 warns about members left out of a designated initializer even when they have default
# member initializers; that idiom is used on purpose, so the warning is off.
function(gpuprobe_strict target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Werror -Wno-missing-field-initializers>)
endfunction()
