# Keep CMake offline: use the system simde headers (apt: libsimde-dev).
set(FETCHCONTENT_SOURCE_DIR_SIMDE "/usr/include" CACHE PATH "system simde headers")
set(FETCHCONTENT_FULLY_DISCONNECTED ON CACHE BOOL "never download during the build")
