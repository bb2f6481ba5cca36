/* Registration of the Sprig and Helm function tables (see sprig.h). */
#include "helm/template/sprig_internal.h"

int sprig_funcs_add(tpl_funcs_t *t) {
  struct {
    const tpl_func_t *f;
    size_t n;
  } tabs[] = {
      {sprig__strings_fns, sprig__strings_nfns}, {sprig__lists_fns, sprig__lists_nfns},
      {sprig__math_fns, sprig__math_nfns},       {sprig__enc_fns, sprig__enc_nfns},     {sprig__regex_fns, sprig__regex_nfns},
      {sprig__rand_fns, sprig__rand_nfns},       {sprig__semver_fns, sprig__semver_nfns},
      {sprig__xstrings_fns, sprig__xstrings_nfns}, {sprig__date_fns, sprig__date_nfns},
      {sprig__crypto_fns, sprig__crypto_nfns},     {sprig__url_fns, sprig__url_nfns}, {sprig__toml_fns, sprig__toml_nfns}, {sprig__toml_dec_fns, sprig__toml_dec_nfns},
      {sprig__bcrypt_fns, sprig__bcrypt_nfns}, {sprig__scrypt_fns, sprig__scrypt_nfns},
  };
  for (size_t i = 0; i < sizeof tabs / sizeof tabs[0]; i++) {
    int rc = tpl_funcs_add(t, tabs[i].f, tabs[i].n);
    if (rc) return rc;
  }
  return 0;
}
