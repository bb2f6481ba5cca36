/* module watch: placeholder until its first source lands */
typedef int watch__placeholder_t;
