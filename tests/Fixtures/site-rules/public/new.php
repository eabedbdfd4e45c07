<?php echo "new ", $_GET["name"] ?? "-";
