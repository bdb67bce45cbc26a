/* The macros of LCI 1.7.9's lci_config.h, checked at compile time (C and
 * C++: config_macros.c, config_macros.cpp, and the installed headers in
 * tests/install and tests/subproject). Each #error names the macro.
 *
 * EXPECT_* (given by the build that compiles this) pin the values that depend
 * on the build's options; without them only the options-independent part is
 * checked. */
#ifndef LCI_TEST_CONFIG_MACROS_H
#define LCI_TEST_CONFIG_MACROS_H
#include <lci.h>
#include <stdio.h>
#include <string.h>

#if !defined(LCI_VERSION) || !defined(LCI_VERSION_MAJOR) || !defined(LCI_VERSION_MINOR) || \
    !defined(LCI_VERSION_PATCH)
#error "LCI_VERSION, LCI_VERSION_MAJOR, LCI_VERSION_MINOR or LCI_VERSION_PATCH is not defined"
#endif
#if LCI_VERSION_MAJOR != 1 || LCI_VERSION_MINOR != 7 || LCI_VERSION_PATCH != 9
#error "LCI_VERSION_{MAJOR,MINOR,PATCH} is not 1.7.9"
#endif

/* Always so in this library. */
#if !defined(LCI_ENABLE_MULTITHREAD_PROGRESS)
#error "LCI_ENABLE_MULTITHREAD_PROGRESS is not defined (LCI_progress is thread-safe)"
#endif
#if !defined(LCI_USE_SERVER_OFI)
#error "LCI_USE_SERVER_OFI is not defined (the libfabric backend is always built)"
#endif
#if defined(LCI_USE_SERVER_UCX)
#error "LCI_USE_SERVER_UCX is defined, but there is no UCX backend"
#endif
#if !defined(LCI_SERVER_HAS_SYNC) || !defined(LCI_SERVER_HAS_CQ) || !defined(LCI_SERVER_HAS_AM)
#error "LCI_SERVER_HAS_SYNC, LCI_SERVER_HAS_CQ or LCI_SERVER_HAS_AM is not defined"
#endif
#if defined(LCI_SERVER_HAS_GLOB)
#error "LCI_SERVER_HAS_GLOB is defined, but no backend has a global address space"
#endif
#if !defined(LCI_COMPILE_DREG)
#error "LCI_COMPILE_DREG is not defined (the registration cache is always compiled)"
#endif
#if !defined(LCI_CONFIG_USE_ALIGNED_ALLOC)
#error "LCI_CONFIG_USE_ALIGNED_ALLOC is not defined (packets are cache-line aligned)"
#endif
#if defined(LCI_USE_AVX) || defined(LCI_USE_GPROF) || defined(LCI_USE_INLINE_CQ) || \
    defined(LCI_ENABLE_SLOWDOWN) || defined(LCI_USE_PAPI) || defined(LCI_OFI_PROVIDER_HINT_DEFAULT)
#error "a macro of a feature this library does not have is defined (AVX, GPROF, INLINE_CQ, SLOWDOWN, PAPI, OFI_PROVIDER_HINT_DEFAULT)"
#endif

/* Defaults, present in every build. */
#if !defined(LCI_USE_DREG_DEFAULT) || (LCI_USE_DREG_DEFAULT != 0 && LCI_USE_DREG_DEFAULT != 1)
#error "LCI_USE_DREG_DEFAULT is not 0 or 1"
#endif
#if !defined(LCI_PACKET_SIZE_DEFAULT) || !defined(LCI_SERVER_MAX_SENDS_DEFAULT) || \
    !defined(LCI_SERVER_MAX_RECVS_DEFAULT) || !defined(LCI_SERVER_MAX_CQES_DEFAULT) || \
    !defined(LCI_SERVER_NUM_PKTS_DEFAULT)
#error "one of LCI_{PACKET_SIZE,SERVER_MAX_SENDS,SERVER_MAX_RECVS,SERVER_MAX_CQES,SERVER_NUM_PKTS}_DEFAULT is not defined"
#endif
#if LCI_PACKET_SIZE_DEFAULT <= 0 || LCI_SERVER_MAX_SENDS_DEFAULT <= 0 || \
    LCI_SERVER_MAX_RECVS_DEFAULT <= 0 || LCI_SERVER_MAX_CQES_DEFAULT <= 0 || \
    LCI_SERVER_NUM_PKTS_DEFAULT <= 0
#error "a resource default is not a positive number"
#endif
#if !defined(LCI_MT_BACKEND_DEFAULT) || !defined(LCI_RDV_PROTOCOL_DEFAULT)
#error "LCI_MT_BACKEND_DEFAULT or LCI_RDV_PROTOCOL_DEFAULT is not defined"
#endif
#if !defined(LCI_CACHE_LINE) || LCI_CACHE_LINE != 64
#error "LCI_CACHE_LINE is not 64"
#endif
#if !defined(LCI_IBV_ENABLE_TD_DEFAULT) || LCI_IBV_ENABLE_TD_DEFAULT != 1
#error "LCI_IBV_ENABLE_TD_DEFAULT is not 1"
#endif
#if !defined(LCI_ENABLE_PRG_NET_ENDPOINT_DEFAULT) || LCI_ENABLE_PRG_NET_ENDPOINT_DEFAULT != 1
#error "LCI_ENABLE_PRG_NET_ENDPOINT_DEFAULT is not 1"
#endif
#if !defined(LCI_MAX_SINGLE_MESSAGE_SIZE_DEFAULT) || LCI_MAX_SINGLE_MESSAGE_SIZE_DEFAULT != 0x7FFFFFFF
#error "LCI_MAX_SINGLE_MESSAGE_SIZE_DEFAULT is not 0x7FFFFFFF"
#endif
#if !defined(LCI_CQ_MAX_POLL) || LCI_CQ_MAX_POLL != 16
#error "LCI_CQ_MAX_POLL is not 16"
#endif
#if !defined(LCI_SERVER_MAX_ENDPOINTS) || LCI_SERVER_MAX_ENDPOINTS != 8
#error "LCI_SERVER_MAX_ENDPOINTS is not 8"
#endif

/* What depends on the build's options. */
#ifdef EXPECT_DEBUG
#if EXPECT_DEBUG != defined(LCI_DEBUG)
#error "LCI_DEBUG does not follow the build's LCI_DEBUG option"
#endif
#endif
#ifdef EXPECT_IBV
#if EXPECT_IBV != defined(LCI_USE_SERVER_IBV)
#error "LCI_USE_SERVER_IBV does not say whether the verbs backend is built"
#endif
#endif
#ifdef EXPECT_PROFILE
#if EXPECT_PROFILE != defined(LCI_USE_PERFORMANCE_COUNTER)
#error "LCI_USE_PERFORMANCE_COUNTER does not follow LCI_ENABLE_PROFILE"
#endif
#endif
#ifdef EXPECT_DREG_DEFAULT
#if EXPECT_DREG_DEFAULT != LCI_USE_DREG_DEFAULT
#error "LCI_USE_DREG_DEFAULT does not follow the build's LCI_USE_DREG_DEFAULT"
#endif
#endif
#ifdef EXPECT_PACKET_SIZE
#if EXPECT_PACKET_SIZE != LCI_PACKET_SIZE_DEFAULT
#error "LCI_PACKET_SIZE_DEFAULT does not follow the build's LCI_PACKET_SIZE_DEFAULT"
#endif
#endif

/* The string defaults, compared when the program runs; 0 when they match. */
static int lci_config_strings_differ(void) {
  const char* mt = LCI_MT_BACKEND_DEFAULT;
  const char* rdv = LCI_RDV_PROTOCOL_DEFAULT;
  int differ = 0;
  if (strcmp(mt, "hashqueue") != 0) {
    printf("LCI_MT_BACKEND_DEFAULT is \"%s\", expected \"hashqueue\"\n", mt);
    differ = 1;
  }
  if (strcmp(rdv, "writeimm") != 0) {
    printf("LCI_RDV_PROTOCOL_DEFAULT is \"%s\", expected \"writeimm\"\n", rdv);
    differ = 1;
  }
  return differ;
}
#endif
