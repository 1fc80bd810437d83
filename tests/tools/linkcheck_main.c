/* The program of the layering link check (mp_linkcheck_<module>, see
 * CMakeLists.txt): the module's library is linked whole beside the modules it
 * declares and nothing else, so any call it makes the wrong way, or to a
 * module it does not declare, is an undefined reference at link time. */
int main(void)
{
    return 0;
}
