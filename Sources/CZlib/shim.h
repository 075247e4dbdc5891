// zlib, as Debian's zlib1g-dev installs it: raw inflate and CRC-32 for the entries of an .ipa
// that authsim doctor reads (Diagnostics/ZipArchive.swift).
#include <zlib.h>
