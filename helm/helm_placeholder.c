/* module helm: placeholder until its first source lands */
typedef int helm__placeholder_t;
