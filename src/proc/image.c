/* Container image names handed to docker / podman (run, pull, image
 * inspect): the name is one argument of those commands, so a name that
 * starts with '-' would be read as an option, and whitespace or control
 * characters never belong in a reference. Checked once where the name
 * enters (configs, flags, tool arguments) so that no caller passes one on. */
#include <stdio.h>

#include <magpie/proc.h>

int mp_proc_image_check(const char *image, const char *field, struct mp_diag *d)
{
    const char *why = NULL;
    char what[64] = "";
    if (!image || !*image) {
        why = "the image name is empty";
    } else if (image[0] == '-') {
        why = "an image name cannot start with '-' (docker and podman would read it as an option)";
    } else {
        for (size_t i = 0; image[i]; i++) {
            unsigned char c = (unsigned char)image[i];
            if (c > 0x20 && c != 0x7f)
                continue;
            if (c == ' ')
                snprintf(what, sizeof(what), "a space at byte %zu", i + 1);
            else
                snprintf(what, sizeof(what), "the control character 0x%02x at byte %zu", c, i + 1);
            why = "an image name cannot hold whitespace or control characters";
            break;
        }
    }
    if (!why)
        return 0;
    if (field)
        mp_diag_set_field(d, field);
    if (what[0])
        return mp_diag_set(d, MP_EINVAL, "%s: found %s", why, what);
    if (image && *image)
        return mp_diag_set(d, MP_EINVAL, "%s: '%s'", why, image);
    return mp_diag_set(d, MP_EINVAL, "%s", why);
}
