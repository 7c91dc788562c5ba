# Writes OUT (a header) with ATTNLAB_COMMIT: the checkout's short commit, "+changes" when the tree differs from it,
# "unknown" outside git. Run at every build (app/CMakeLists.txt); the file is rewritten only when it changes, so
# only what includes it is compiled again.
execute_process(COMMAND git -C "${SRC}" rev-parse --short=10 HEAD OUTPUT_VARIABLE commit
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
    set(commit "unknown")
else()
    execute_process(COMMAND git -C "${SRC}" status --porcelain --untracked-files=no OUTPUT_VARIABLE changes
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT changes STREQUAL "")
        set(commit "${commit}+changes")
    endif()
endif()
set(text "#define ATTNLAB_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
    file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
    file(WRITE "${OUT}" "${text}")
endif()
