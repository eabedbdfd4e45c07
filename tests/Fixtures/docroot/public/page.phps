<?php echo "password";
