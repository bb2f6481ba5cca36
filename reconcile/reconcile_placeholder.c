/* module reconcile: placeholder until its first source lands */
typedef int reconcile__placeholder_t;
