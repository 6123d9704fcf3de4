# SPDX-License-Identifier: Apache-2.0
# Embeds each src/scripts/*.lua as a string constant `relock::scripts::<stem>` so the library
# carries its Lua and needs no files at run time.
function(relock_embed_scripts out_var)
  set(generated_dir ${CMAKE_CURRENT_BINARY_DIR}/generated/relock_scripts)
  file(MAKE_DIRECTORY ${generated_dir})
  set(outputs)
  foreach(lua ${ARGN})
    get_filename_component(stem ${lua} NAME_WE)
    set(out ${generated_dir}/${stem}.cpp)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -DIN=${lua} -DOUT=${out} -DSTEM=${stem}
              -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_one_script.cmake
      DEPENDS ${lua} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_one_script.cmake
      COMMENT "Embedding ${stem}.lua")
    list(APPEND outputs ${out})
  endforeach()
  set(${out_var} ${outputs} PARENT_SCOPE)
endfunction()
