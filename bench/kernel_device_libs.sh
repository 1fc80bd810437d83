#!/bin/bash
# Makes .klibs/ (ignored): the shared libraries of a magpie build that the
# H200 device image lacks (all of ldd's but glibc's), and .klibs/magpie, a
# wrapper that runs the build with them and its Python children without them.
#   bench/kernel_device_libs.sh [BUILD_DIR]     then carry BUILD_DIR and .klibs,
#   and run e.g. MAGPIE=$PWD/.klibs/magpie OUT=$OUT bench/kernel_noise.sh
set -eu
B=${1:-build/rel-k}
rm -rf .klibs && mkdir .klibs
grep -qx '/.klibs/' .git/info/exclude 2>/dev/null || echo '/.klibs/' >>.git/info/exclude
ldd "$B/magpie" | awk '/=>/{print $3}' |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv)\.so|ld-linux' |
    xargs -I{} cp -L {} .klibs/
cat >.klibs/magpie <<EOW
#!/bin/sh
d=\$(cd "\$(dirname "\$0")" && pwd)
export MAGPIE_PYTHON="\$d/py"
LD_LIBRARY_PATH="\$d\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$d/../$B/magpie" "\$@"
EOW
printf '#!/bin/sh\nunset LD_LIBRARY_PATH\nexec python3 "$@"\n' >.klibs/py
chmod +x .klibs/magpie .klibs/py
du -sh .klibs
