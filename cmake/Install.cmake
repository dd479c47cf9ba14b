# Install rules.
#   cmake --install build [--prefix P]                  the service (component "service"):
#       bin/gpuprobed, bin/gpuprobe; lib/systemd/system/gpuprobed.service (ExecStart in P's bin);
#       share/gpuprobe/gpuprobed.env (for /etc/default/gpuprobed), share/gpuprobe/grafana/, and
#       the dashboard page in share/gpuprobe/web (where gpuprobed looks: BIN/../share/...).
#   cmake --install build --component bundle --prefix bundle   the relocatable bundle for GPU
#       hosts without packages (deploy/make-bundle.sh): bin/, share/gpuprobe/web (the page),
#       the GPU tests, their test modules and the tools in tests/,
#       and lib/ holding the binaries' runtime dependency set (every shared library they load
#       beyond glibc and the driver). The binaries' RPATH is $ORIGIN/../lib, as DT_RPATH so that
#       it also serves the libraries' own dependencies.
include(GNUInstallDirs)

set(bundle_programs gpuprobed gpuprobe)
set(bundle_tools)
foreach(tool cuda_backend_test kernel_probe_gpu_test copy_bandwidth_probe)
  if(TARGET ${tool})
    list(APPEND bundle_tools ${tool})
  endif()
endforeach()
foreach(target ${bundle_programs} ${bundle_tools})
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")
  target_link_options(${target} PRIVATE "LINKER:--disable-new-dtags")
endforeach()

install(TARGETS ${bundle_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT service)
# The unit's ExecStart names the gpuprobed installed beside it: the prefix is known at install
# time only (cmake --install --prefix).
install(CODE "
  file(READ \"${PROJECT_SOURCE_DIR}/deploy/systemd/gpuprobed.service\" unit)
  string(REPLACE \"/usr/local/bin/gpuprobed\"
         \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/gpuprobed\" unit \"\${unit}\")
  set(path \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/gpuprobed.service\")
  message(STATUS \"Installing: \${path}\")
  file(WRITE \"\${path}\" \"\${unit}\")
" COMPONENT service)
install(FILES deploy/systemd/gpuprobed.env DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuprobe
        COMPONENT service)
install(FILES deploy/grafana/gpuprobe-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuprobe/grafana COMPONENT service)
set(web_page server/web/assets/index.html server/web/assets/sweep.js server/web/assets/app.js)
install(FILES ${web_page} DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuprobe/web COMPONENT service)

install(TARGETS ${bundle_programs} RUNTIME_DEPENDENCY_SET bundle_libraries
        RUNTIME DESTINATION bin COMPONENT bundle EXCLUDE_FROM_ALL)
if(bundle_tools)
  install(TARGETS ${bundle_tools} RUNTIME_DEPENDENCY_SET bundle_libraries
          RUNTIME DESTINATION tests COMPONENT bundle EXCLUDE_FROM_ALL)
endif()
install(FILES ${web_page} DESTINATION share/gpuprobe/web COMPONENT bundle EXCLUDE_FROM_ALL)
install(PROGRAMS tests/offline/verify_dump.py DESTINATION tests COMPONENT bundle EXCLUDE_FROM_ALL)
# The modules the kernel probe's GPU test runs (TEST_MODULES_DIR=bundle/tests/modules).
if(TARGET kernel_probe_gpu_test)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/tests/modules/ DESTINATION tests/modules COMPONENT bundle
          EXCLUDE_FROM_ALL)
endif()
# glibc's own libraries and the driver's come from the host.
install(RUNTIME_DEPENDENCY_SET bundle_libraries DESTINATION lib COMPONENT bundle EXCLUDE_FROM_ALL
        PRE_EXCLUDE_REGEXES
          [=[^(ld-linux|linux-vdso|libc|libm|libpthread|libdl|librt|libresolv)[.-]]=]
          [[^libcuda\.so]] [[^libnvidia]]
        POST_EXCLUDE_REGEXES [[^/lib.*/ld-linux]])
