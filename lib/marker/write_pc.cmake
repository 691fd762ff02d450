# Writes mlbench-marker.pc at install time (lib/marker/CMakeLists.txt sets the MARKER_*
# variables before running it): prefix= is the prefix being installed to, the directories are
# relative to it unless GNUInstallDirs made them absolute.
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${MARKER_${dir}}")
    set(MARKER_PC_${dir} "${MARKER_${dir}}")
  else()
    set(MARKER_PC_${dir} "\${prefix}/${MARKER_${dir}}")
  endif()
endforeach()
configure_file("${MARKER_PC_IN}" "${MARKER_PC_OUT}" @ONLY)
