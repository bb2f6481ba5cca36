/* module queue: placeholder until its first source lands */
typedef int queue__placeholder_t;
