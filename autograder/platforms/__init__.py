"""What LMSs read: Gradescope, Canvas, Moodle, JUnit files and LTI 1.3 grade passback."""
